// The errors the router ends with when no candidate answered, each saying what was tried.
import { ApiError, type ErrorType } from '../errors.js';
import { explicitSelection } from './catalog.js';
import { modelNotFound } from './model-not-found.js';
import { endpointRefusalAdvice } from './ssrf.js';
import type { Attempt, ProviderConnection } from './types.js';
import type { VendorError } from './vendor-errors.js';

/** An ApiError that also says what was tried, so the route can still set its headers. */
export class ProviderRouteError extends ApiError {
  constructor(
    statusCode: number,
    type: ErrorType,
    code: string,
    message: string,
    readonly attempts: Attempt[],
    readonly upstreamMs: number,
    headers: Record<string, string> = {},
  ) {
    super(statusCode, type, code, message, null, headers);
  }
}

/** The request's own fault (or the caller's abort): returned as is, with the vendor's message. */
export function final(error: VendorError, attempts: Attempt[], upstreamMs: number): Error {
  if (error.kind === 'abort') return error;
  return new ProviderRouteError(error.status ?? 400, 'invalid_request_error', 'provider_rejected_request', error.message, attempts, upstreamMs);
}

export function requestTimedOut(requestTimeoutMs: number, attempts: Attempt[], upstreamMs: number): ProviderRouteError {
  const listed = attempts.length > 0 ? `: ${attempts.map(describe).join('; ')}` : '';
  return new ProviderRouteError(504, 'upstream_error', 'request_timeout', `No provider answered within the request deadline of ${requestTimeoutMs} ms${listed}.`, attempts, upstreamMs);
}

export function allFailed(failures: VendorError[], attempts: Attempt[], upstreamMs: number): ProviderRouteError {
  const listed = attempts.map(describe).join('; ');
  // Only when every real attempt was throttled is "slow down" the truth; otherwise the service is unavailable.
  if (failures.length > 0 && failures.every((f) => f.kind === 'rate_limit')) {
    const waits = failures.map((f) => f.retryAfterMs).filter((ms): ms is number => ms !== null);
    const headers: Record<string, string> = waits.length > 0 ? { 'retry-after': String(Math.ceil(Math.min(...waits) / 1000)) } : {};
    return new ProviderRouteError(429, 'rate_limit_error', 'upstream_rate_limited', `Every provider rate-limited the request: ${listed}.`, attempts, upstreamMs, headers);
  }
  const advice = endpointRefusalAdvice(failures.filter((f) => f.kind === 'endpoint_not_allowed').map((f) => f.provider));
  return new ProviderRouteError(502, 'upstream_error', 'upstream_unavailable', `All providers failed: ${listed}.${advice}`, attempts, upstreamMs);
}

function describe(attempt: Attempt): string {
  const what = attempt.status !== null ? `HTTP ${attempt.status}` : '';
  const why = attempt.outcome === 'skipped' ? `skipped, ${attempt.reason}` : attempt.reason ?? '';
  return `${attempt.provider} (${[what, why].filter(Boolean).join(', ')})`;
}

export function notServed(model: string, connections: ProviderConnection[]): ApiError {
  const configured = [...new Set(connections.map((c) => c.provider))];
  const have = configured.length > 0 ? `configured: ${configured.join(', ')}` : 'no provider connections are configured';
  const explicit = explicitSelection(model);
  const message = explicit
    ? `Model "${model}" is not served by any of your provider connections: it selects provider "${explicit.provider}", which has no connection (${have}).`
    : `Model "${model}" is not served by any of your provider connections (${have}).`;
  return modelNotFound(model, message);
}
