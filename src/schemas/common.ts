// Schema primitives shared by every resource, and the error envelope every route declares.
import { Type, type SchemaOptions, type Static, type TSchema } from '@sinclair/typebox';

/** Lowercase letters, digits and inner hyphens, 3 to 39 characters (an `author` in ladder URLs). */
export const USERNAME_PATTERN = '^[a-z0-9](?:[a-z0-9-]{1,37})[a-z0-9]$';
// Usernames that would shadow a fixed path under /v1 (`/v1/{author}` is a ladder listing).
export const RESERVED_USERNAMES = new Set([
  'account', 'admin', 'api', 'api-keys', 'chat', 'completions', 'docs', 'embeddings', 'healthz', 'instances', 'messages',
  'models', 'openapi', 'pipelines', 'providers', 'readyz', 'responses', 'validate', 'v1', 'webhooks',
]);

/** Ladder slugs: lowercase letters, digits, `-` and `_`, 1 to 64 characters, starting alphanumeric. */
export const SLUG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

export const Username = Type.String({ pattern: USERNAME_PATTERN, description: 'Account username' });
export const Slug = Type.String({ pattern: SLUG_PATTERN, description: 'Ladder slug' });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp' });
/**
 * The plain 8-4-4-4-12 form, the only one the database takes (the `uuid` format alone would
 * also accept `urn:uuid:...`, which PostgreSQL refuses with an error).
 */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const Uuid = Type.String({ format: 'uuid', pattern: UUID_PATTERN });

export const ErrorSchema = Type.Object(
  {
    error: Type.Object({
      message: Type.String(),
      type: Type.String(),
      code: Type.String(),
      param: Type.Union([Type.String(), Type.Null()]),
    }),
  },
  { $id: 'Error', description: 'The error envelope every failure uses' },
);

/**
 * A string enum: `{type: 'string', enum}` in the OpenAPI document and one keyword for Ajv (whose
 * error names the allowed values), where a union of literals shows as `anyOf` of constants.
 */
export const StringEnum = <const T extends string>(values: readonly T[], options: SchemaOptions = {}) =>
  Type.Unsafe<T>({ ...options, type: 'string', enum: [...values] });

/**
 * The schema as a route declares it, with examples for the OpenAPI document (and Swagger UI's
 * "Try it out"). Typed, and checked against the schema by test/plugins/openapi.test.ts.
 */
export const withExamples = <T extends TSchema>(schema: T, ...examples: Static<T>[]): T => ({ ...schema, examples });

/** A success response as a route declares it: what it means (the response's description) and examples. */
export const successResponse = <T extends TSchema>(description: string, schema: T, ...examples: Static<T>[]): T =>
  ({ ...schema, 'x-response-description': description, examples });

export const OkSchema = Type.Object({ ok: Type.Literal(true) });

/** Response schemas for the error statuses a route can answer, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  // Every such route may also answer 503: shutting_down, or database_unavailable while the database does not answer.
  return Object.fromEntries([...new Set([...statuses, 503])].map((s) => [s, Type.Ref('Error')]));
}
