// Route schemas compiled on first use instead of at start. Fastify compiles every route's
// validators (Ajv) and response serializers (fast-json-stringify, one per status, errors
// included) before it listens: about 2 s of CPU for this API, most of it for routes a process
// may never serve. These factories hand Fastify a stand-in per schema that compiles the real
// function with Fastify's own default compilers the first time it runs and keeps it, so
// validation errors and serialized bodies are exactly what they were. A schema that cannot
// compile now fails on first use (a 500) instead of at start, so a test compiles them all.
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type Validate = ((...args: unknown[]) => unknown) & { errors?: unknown; schemaEnv?: unknown };
/** What Fastify passes a compiler (the published types say the bare schema; it is this). */
interface RouteSchema {
  schema: unknown;
  httpPart?: string;
}
type Builder = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => Validate;

// The default compilers, resolved from Fastify's own dependencies: the versions it would use.
// Loaded when first needed, or by `loadSchemaCompilers` once the server listens: loading them
// (Ajv above all) took 110-200 ms of the main thread's start on a slow machine.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
let validators: Builder | null = null;
let serializers: Builder | null = null;
const defaultValidators = () => (validators ??= (fromFastify('@fastify/ajv-compiler') as () => Builder)());
const defaultSerializers = () => (serializers ??= (fromFastify('@fastify/fast-json-stringify-compiler') as () => Builder)());

/** Loads the compilers now (the server calls it a second after it starts listening), so that the first request need not. */
export function loadSchemaCompilers(): void {
  defaultValidators();
  defaultSerializers();
}

/**
 * Fastify lower-cases the property names of a `headers` schema (Node lower-cases the headers)
 * only for its own compiler; a factory given in options counts as custom, so it is done here,
 * for the names a header schema lists directly.
 */
function lowerCaseHeaders(schema: unknown): unknown {
  const s = schema as { properties?: Record<string, unknown>; required?: string[] };
  if (!s || typeof s !== 'object' || !s.properties) return schema;
  return Object.assign({}, s, {
    properties: Object.fromEntries(Object.entries(s.properties).map(([name, value]) => [name.toLowerCase(), value])),
    ...(s.required ? { required: s.required.map((name) => name.toLowerCase()) } : {}),
  });
}

export interface LazyCompilers {
  /** Fastify's `schemaController.compilersFactory`. */
  factories: Factories;
  /** Compiles every schema not compiled yet; throws what the first failing one throws. Returns how many it compiled. */
  compilePending(): number;
}

/** One per Fastify instance: the stand-ins not yet compiled are its own. */
export function createLazyCompilers(): LazyCompilers {
  const pending = new Set<() => unknown>();

  /** A function that becomes `compile()`'s result on first call. Ajv reports failures on the function (`.errors`), so they are copied over. */
  function lazy<F extends Validate>(compile: () => F): F {
    let real: F | null = null;
    const load = (): F => {
      if (real) return real;
      pending.delete(load);
      real = compile();
      // Fastify passes Ajv's context arguments only to a function that has this member.
      if (real.schemaEnv !== undefined) standIn.schemaEnv = real.schemaEnv;
      return real;
    };
    // Fastify calls a validator with the data and, when it has `schemaEnv`, Ajv's context; a serializer with the data.
    // Two fixed parameters and a direct call (no rest array, no apply) keep a warm route's stand-in nearly free.
    const standIn = function (this: unknown, data: unknown, context: unknown) {
      const fn = real ?? load();
      const result = fn.call(this, data, context);
      standIn.errors = fn.errors;
      return result;
    } as F;
    pending.add(load);
    return standIn;
  }

  return {
    factories: {
      // The compilers themselves are made on first use too: an Ajv instance checks every shared schema against its meta-schema.
      buildValidator: ((externalSchemas, options) => {
        let compile: ReturnType<Builder> | null = null;
        return (route) => {
          const def = route.httpPart === 'headers' ? Object.assign({}, route, { schema: lowerCaseHeaders(route.schema) }) : route;
          return lazy(() => (compile ??= defaultValidators()(externalSchemas, options))(def));
        };
      }) satisfies Builder as unknown as Factories['buildValidator'],
      buildSerializer: ((externalSchemas, options) => {
        let compile: ReturnType<Builder> | null = null;
        return (route) => lazy(() => (compile ??= defaultSerializers()(externalSchemas, options))(route));
      }) satisfies Builder as unknown as Factories['buildSerializer'],
    },
    compilePending() {
      const loads = [...pending];
      for (const load of loads) load();
      return loads.length;
    },
  };
}
