// Ladder routes validate their path with attachValidation, so that a malformed author or
// slug gets the same answer as any other ladder the caller cannot see (the services decide),
// instead of a schema error that would single such paths out.
import type { FastifyRequest } from 'fastify';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { validationError } from '../../plugins/validation-errors.js';

type Validator = ((data: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null };

/**
 * Rethrows a body or query validation error; a params error is left to the service. Fastify
 * stops at the first part that fails, so after a params error the query string and body
 * have not been checked yet: they are checked here, as for any other path, because the
 * handler relies on them (body checks come before the ladder lookup, docs/ladders-api.md).
 */
export function rethrowUnlessParams(request: FastifyRequest): void {
  const error = request.validationError;
  if (!error) return;
  if (error.validationContext !== 'params') throw error;
  for (const [part, data] of [['body', request.body], ['querystring', request.query]] as const) {
    const validate = request.getValidationFunction(part) as Validator | undefined;
    // Fastify validates an absent part as null.
    if (typeof validate === 'function' && !validate(data ?? null)) throw validationError(validate.errors ?? [], part);
  }
}
