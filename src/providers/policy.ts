// The fallback and retry policy, written once. Everything here decides from a VendorError's kind.
import type { VendorError, VendorErrorKind } from './vendor-errors.js';

/** Kinds that are the request's own fault (400, 404, 413, 422) or the caller's choice: never retried elsewhere. */
const FINAL: ReadonlySet<VendorErrorKind> = new Set(['bad_request', 'not_found', 'abort']);

/** Try the next candidate? Yes for connection errors, timeouts, 408, 409, 429, 5xx, 401/403, 3xx, bad bodies. */
export function fallsBack(error: VendorError): boolean {
  return !FINAL.has(error.kind);
}

/** Does this failure say the connection is unhealthy (feeds the circuit breaker)? */
export function countsAgainstConnection(error: VendorError): boolean {
  return fallsBack(error);
}

/** Short machine-readable reason per kind, for attempts, logs and the all-failed message. */
export const REASONS: Record<VendorErrorKind, string> = {
  rate_limit: 'rate_limited',
  auth: 'auth_failed',
  bad_request: 'rejected',
  not_found: 'not_found',
  server: 'server_error',
  upstream_status: 'http_error',
  connection: 'connection_error',
  endpoint_not_allowed: 'endpoint_not_allowed',
  timeout: 'timeout',
  abort: 'aborted',
  bad_response: 'bad_response',
  too_large: 'vendor_response_too_large',
};

/** Longest Retry-After worth waiting for on the same connection. */
export const MAX_RETRY_AFTER_MS = 1000;

/**
 * One retry on the same connection, only for a 429 whose Retry-After is at most a second, and
 * only when no other candidate is left: falling back is faster than waiting, waiting beats failing.
 */
export function retryDelayMs(error: VendorError, otherCandidatesLeft: boolean, alreadyRetried: boolean): number | null {
  if (error.kind !== 'rate_limit' || otherCandidatesLeft || alreadyRetried) return null;
  const after = error.retryAfterMs;
  if (after === null || after > MAX_RETRY_AFTER_MS) return null;
  // Jitter spreads the callers that were all told the same Retry-After.
  return after + Math.random() * (after * 0.2 + 25);
}
