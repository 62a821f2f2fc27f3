// Maps a JSON-schema (Ajv) violation to one precise error: the offending field as `param`
// in OpenAI's dotted form (`messages[0].role`), and a stable code per kind of violation.
import type { FastifySchemaValidationError, SchemaErrorDataVar } from 'fastify/types/schema.js';
import { type ApiError, invalidRequest, missingField } from '../errors.js';

const PLACE: Record<string, string> = { body: 'request body', querystring: 'query string', params: 'URL', headers: 'headers' };

export function validationError(errors: FastifySchemaValidationError[], context: SchemaErrorDataVar): ApiError {
  // A failed union lists each branch's complaint first; the union itself says more.
  const e = errors.find((x) => x.keyword === 'anyOf' || x.keyword === 'oneOf') ?? errors[0]!;
  const params = e.params as Record<string, unknown>;
  const at = toParam(e.instancePath);
  const join = (child: string) => (at ? `${at}.${child}` : child);
  switch (e.keyword) {
    case 'required':
      return missingField(join(String(params.missingProperty)));
    case 'additionalProperties': {
      const param = join(String(params.additionalProperty));
      return invalidRequest('unknown_parameter', `Unrecognized request argument supplied: ${param}.`, param);
    }
    case 'type':
      if (!at) return invalidRequest('invalid_type', `The ${PLACE[context] ?? context} must be a JSON ${params.type}.`);
      return invalidRequest('invalid_type', `${at} must be ${article(String(params.type))}.`, at);
    case 'enum':
      return invalidRequest('invalid_value', `${at} must be one of: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}.`, at);
    case 'const':
      return invalidRequest('invalid_value', `${at} must be ${JSON.stringify(params.allowedValue)}.`, at);
    case 'anyOf':
    case 'oneOf':
      return unionError(e, at);
    default:
      return invalidRequest('invalid_value', `${at || 'The request body'} ${e.message ?? 'is invalid'}.`, at || null);
  }
}

/** Names the accepted values of a union of constants, or uses the union's description. */
function unionError(e: FastifySchemaValidationError, at: string): ApiError {
  const branches = (e as { schema?: unknown }).schema;
  const constants = Array.isArray(branches) && branches.every((b) => b && typeof b === 'object' && 'const' in b) ? branches.map((b) => JSON.stringify(b.const)) : null;
  const description = (e as { parentSchema?: { description?: string } }).parentSchema?.description;
  const what = at || 'The request body';
  if (constants) return invalidRequest('invalid_value', `${what} must be one of: ${constants.join(', ')}.`, at || null);
  if (description) return invalidRequest('invalid_value', `${what} must be ${description}.`, at || null);
  return invalidRequest('invalid_value', `${what} has an invalid type or shape.`, at || null);
}

/** `/messages/0/role` → `messages[0].role` */
function toParam(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
}

function article(type: string): string {
  const name = type === 'integer' ? 'an integer' : type === 'array' ? 'an array' : type === 'object' ? 'an object' : `a ${type}`;
  return name.replace(',', ' or ');
}
