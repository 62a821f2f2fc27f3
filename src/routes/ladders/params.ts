// Ladder routes validate their path with attachValidation, so that a malformed author or
// slug gets the same answer as any other ladder the caller cannot see (the services decide),
// instead of a schema error that would single such paths out.
import type { FastifyRequest } from 'fastify';

/** Rethrows a body or query validation error; a params error is left to the service. */
export function rethrowUnlessParams(request: FastifyRequest): void {
  const error = request.validationError;
  if (error && error.validationContext !== 'params') throw error;
}
