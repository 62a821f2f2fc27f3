// The fallback router: candidates in order, circuit breaker, one policy for fallback and retry,
// and the error a caller sees when nothing answered.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { ApiError, type ErrorType } from '../errors.js';
import { abortScope } from '../abort-scope.js';
import { adapters } from './adapters/index.js';
import { CircuitBreaker, circuitKey, type BreakerOptions } from './breaker.js';
import { callVendor, type Target } from './call-vendor.js';
import { candidatesFor, explicitSelection, type Candidate } from './catalog.js';
import type { VendorModel } from './adapters/types.js';
import { createModelLists } from './model-list.js';
import { modelNotFound } from './model-not-found.js';
import { REASONS, countsAgainstConnection, fallsBack, retryDelayMs } from './policy.js';
import { endpointRefusalAdvice, validateEndpointUrl } from './ssrf.js';
import { createTransport, type Transport } from './transport.js';
import type { Attempt, ChatRequest, ChatResult, ProviderConnection } from './types.js';
import { VendorError, transportError } from './vendor-errors.js';

export interface RouterLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ProviderRouterOptions {
  /** Total time per attempt, from connect to the last body byte. Default 60000 ms. */
  timeoutMs?: number;
  /** Total time per call, every attempt and retry wait together; then all is aborted (504). Default 120000 ms. */
  requestTimeoutMs?: number;
  /** TCP + TLS handshake limit for a new connection. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** Provider id -> base URL, from PROVIDER_BASE_URL_<ID>; operator-set, so not SSRF-checked. Default {}. */
  baseUrls?: Record<string, string>;
  /** Let user endpoints (custom, azure-openai) reach loopback/private networks and plain http. Default false. */
  allowPrivateEndpoints?: boolean;
  /** Circuit breaker per connection. Default 3 consecutive failures, 30000 ms cooldown. */
  breaker?: BreakerOptions;
  /** Receives one line per attempt (successes at debug); never the key. Default: silent. */
  logger?: RouterLogger;
  /** Replaces the built-in agents (tests, proxies); not closed by close(). Default: own keep-alive agents. */
  dispatcher?: Dispatcher;
  /** Largest accepted success body; a larger one is a failed attempt that falls back. Default 4 MiB. */
  maxResponseBytes?: number;
}

export interface ProviderRouter {
  /** `log` replaces the router's logger for this call (e.g. a request's, to carry its id). */
  call(request: ChatRequest, connections: ProviderConnection[], signal?: AbortSignal, log?: RouterLogger): Promise<ChatResult>;
  /** The vendor's own model list for a connection (cached for a minute); null when it has none. */
  listModels(connection: ProviderConnection): Promise<VendorModel[] | null>;
  close(): Promise<void>;
  /** A connection's circuit, as the breaker sees it now (read by metrics at scrape time). */
  /** The state of one circuit, named by circuitKey(connection). */
  circuitState(circuit: string): ReturnType<CircuitBreaker['state']>;
}

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

function targetFrom(url: URL, dispatcher: Dispatcher, opaque: boolean): Target {
  return { origin: url.origin, basePath: url.pathname.replace(/\/+$/, ''), dispatcher, opaque };
}

const ENDPOINT_CACHE_LIMIT = 1000;
/** The abort reason of a call that ran out of its request deadline. */
const DEADLINE = Symbol('request deadline');


export function createProviderRouter(options: ProviderRouterOptions = {}): ProviderRouter {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const requestTimeoutMs = options.requestTimeoutMs ?? 120_000;
  const allowPrivate = options.allowPrivateEndpoints ?? false;
  const maxResponseBytes = options.maxResponseBytes ?? 4 * 1024 * 1024;
  const logger = options.logger;
  const transport: Transport = createTransport({
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    allowPrivateEndpoints: allowPrivate,
    dispatcher: options.dispatcher,
  });
  const breaker = new CircuitBreaker(options.breaker);

  // Base URLs are parsed once here, so the hot path does no URL work for catalog vendors.
  const vendorTargets = new Map<string, Target>();
  for (const [id, adapter] of Object.entries(adapters)) {
    const override = options.baseUrls?.[id];
    const base = override ?? adapter.defaultBaseUrl;
    if (base) vendorTargets.set(id, targetFrom(parseBaseUrl(id, base), transport.vendors, false));
  }
  for (const id of Object.keys(options.baseUrls ?? {})) {
    if (!adapters[id]) throw new Error(`PROVIDER_BASE_URL_${envName(id)}: "${id}" is not a provider in the catalog`);
  }
  const endpointTargets = new Map<string, Target | VendorError>();

  function targetFor(connection: ProviderConnection): Target | VendorError {
    if (connection.endpoint === null || connection.endpoint === '') {
      return vendorTargets.get(connection.provider) ?? transportError(connection.provider, 'endpoint_not_allowed', 'connection has no endpoint');
    }
    let target = endpointTargets.get(connection.endpoint);
    if (!target) {
      try {
        target = targetFrom(validateEndpointUrl(connection.endpoint, allowPrivate), transport.endpoints, true);
      } catch {
        target = transportError(connection.provider, 'endpoint_not_allowed', 'endpoint URL is not allowed');
      }
      if (endpointTargets.size >= ENDPOINT_CACHE_LIMIT) endpointTargets.clear();
      endpointTargets.set(connection.endpoint, target);
    }
    return target;
  }

  async function call(request: ChatRequest, connections: ProviderConnection[], signal?: AbortSignal, log = logger): Promise<ChatResult> {
    const candidates = candidatesFor(request.model, connections);
    if (candidates.length === 0) throw notServed(request.model, connections);
    // One deadline for the whole call: N hanging connections cost requestTimeoutMs, not N attempts.
    const scope = abortScope(signal);
    const deadline = setTimeout(() => scope.abort(DEADLINE), requestTimeoutMs);
    try {
      return await attemptAll(request, candidates, scope.signal, log);
    } finally {
      clearTimeout(deadline);
      scope.dispose();
    }
  }

  async function attemptAll(request: ChatRequest, candidates: Candidate[], signal: AbortSignal, log: RouterLogger | undefined): Promise<ChatResult> {
    const attempts: Attempt[] = [];
    const failures: VendorError[] = [];
    let upstreamMs = 0;
    let translationError: ApiError | null = null;
    const pastDeadline = () => signal.reason === DEADLINE;
    // Never fail without trying: if every circuit is open, the one that reopens first is tried anyway.
    const forced = candidates.some((c) => breaker.wouldAdmit(circuitKey(c.connection)))
      ? null
      : candidates.reduce((a, b) => (breaker.openUntil(circuitKey(b.connection)) < breaker.openUntil(circuitKey(a.connection)) ? b : a));

    for (let i = 0; i < candidates.length; i++) {
      const candidate = candidates[i]!;
      const { connection } = candidate;
      const circuit = circuitKey(connection);
      // Admission happens only when the candidate's turn comes, so a half-open trial is never
      // claimed by a request that answers from an earlier candidate.
      if (candidate === forced) breaker.force(circuit);
      else if (breaker.admit(circuit) === 'open') {
        attempts.push(record(log, candidate, null, 'skipped', 'circuit_open', 0));
        continue;
      }
      const adapter = adapters[connection.provider]!;
      let body: string;
      try {
        body = JSON.stringify(adapter.toVendor(request, candidate.vendorModel));
      } catch (error) {
        // This vendor cannot express the request (a parameter or an image form it does not take); another may.
        if (!(error instanceof ApiError)) throw error;
        translationError ??= error;
        breaker.release(circuit);
        attempts.push(record(log, candidate, null, 'skipped', error.code === 'unsupported_parameter' ? 'unsupported_parameter' : 'unsupported_content', 0));
        continue;
      }
      const target = targetFor(connection);
      for (let retried = false; ; retried = true) {
        const started = performance.now();
        try {
          if (target instanceof VendorError) throw target;
          const result = await callVendor({
            adapter,
            provider: connection.provider,
            target,
            apiKey: connection.apiKey,
            vendorModel: candidate.vendorModel,
            body,
            request,
            timeoutMs,
            maxResponseBytes,
            signal,
          });
          const latencyMs = performance.now() - started;
          upstreamMs += latencyMs;
          breaker.success(circuit);
          attempts.push(record(log, candidate, result.status, 'ok', undefined, latencyMs, result.requestId));
          // Object.assign rather than `{ ...output, more }`: Node 20's V8 builds the latter on a slow path (µs per call).
          return Object.assign({}, result.output, { model: result.output.model ?? candidate.vendorModel, provider: connection.provider, attempts, upstreamMs });
        } catch (caught) {
          const latencyMs = performance.now() - started;
          upstreamMs += latencyMs;
          if (!(caught instanceof VendorError)) throw caught;
          if (caught.kind === 'abort' && pastDeadline()) {
            attempts.push(record(log, candidate, null, 'failed', 'request_timeout', latencyMs));
            breaker.release(circuit);
            throw requestTimedOut(requestTimeoutMs, attempts, upstreamMs);
          }
          attempts.push(record(log, candidate, caught.status, 'failed', REASONS[caught.kind], latencyMs, caught.requestId));
          if (!fallsBack(caught)) {
            breaker.release(circuit);
            throw final(caught, attempts, upstreamMs);
          }
          if (countsAgainstConnection(caught)) breaker.failure(circuit);
          const othersLeft = candidates.slice(i + 1).some((c) => breaker.wouldAdmit(circuitKey(c.connection)));
          const delay = retryDelayMs(caught, othersLeft, retried);
          if (delay === null) {
            failures.push(caught);
            break;
          }
          const waitStarted = performance.now();
          try {
            await sleep(delay, undefined, { signal });
          } catch {
            if (pastDeadline()) throw requestTimedOut(requestTimeoutMs, attempts, upstreamMs);
            throw final(transportError(connection.provider, 'abort', 'request aborted by the caller'), attempts, upstreamMs);
          }
          // Vendor-imposed waiting is upstream time, not time this service added.
          upstreamMs += performance.now() - waitStarted;
        }
      }
    }
    if (failures.length === 0 && translationError) throw translationError;
    throw allFailed(failures, attempts, upstreamMs);
  }

  function record(
    log: RouterLogger | undefined,
    candidate: Candidate,
    status: number | null,
    outcome: Attempt['outcome'],
    reason: string | undefined,
    latencyMs: number,
    vendorRequestId: string | null = null,
  ): Attempt {
    const attempt: Attempt = { provider: candidate.connection.provider, status, outcome, latencyMs: Math.round(latencyMs * 100) / 100 };
    if (reason) attempt.reason = reason;
    if (log) {
      const line = { provider: attempt.provider, connectionId: candidate.connection.id, model: candidate.vendorModel, status, latencyMs: attempt.latencyMs, outcome, reason, vendorRequestId };
      // Successes are summed up in the request's own log line (provider, attempts); a line each
      // would double the logging cost of every call.
      if (outcome === 'failed') log.warn(line, 'provider attempt failed');
      else if (outcome === 'skipped') log.info(line, 'provider attempt skipped');
      else log.debug(line, 'provider attempt ok');
    }
    return attempt;
  }

  const modelLists = createModelLists({ timeoutMs: Math.min(timeoutMs, 10_000), ttlMs: 60_000 });

  return {
    call,
    listModels: (connection) => modelLists.get(connection, targetFor(connection)),
    close: () => transport.close(),
    circuitState: (circuit) => breaker.state(circuit), // metrics: circuit gauges
  };
}

/** The request's own fault (or the caller's abort): returned as is, with the vendor's message. */
function final(error: VendorError, attempts: Attempt[], upstreamMs: number): Error {
  if (error.kind === 'abort') return error;
  return new ProviderRouteError(error.status ?? 400, 'invalid_request_error', 'provider_rejected_request', error.message, attempts, upstreamMs);
}

function requestTimedOut(requestTimeoutMs: number, attempts: Attempt[], upstreamMs: number): ProviderRouteError {
  const listed = attempts.length > 0 ? `: ${attempts.map(describe).join('; ')}` : '';
  return new ProviderRouteError(504, 'upstream_error', 'request_timeout', `No provider answered within the request deadline of ${requestTimeoutMs} ms${listed}.`, attempts, upstreamMs);
}

function allFailed(failures: VendorError[], attempts: Attempt[], upstreamMs: number): ProviderRouteError {
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

function notServed(model: string, connections: ProviderConnection[]): ApiError {
  const configured = [...new Set(connections.map((c) => c.provider))];
  const have = configured.length > 0 ? `configured: ${configured.join(', ')}` : 'no provider connections are configured';
  const explicit = explicitSelection(model);
  const message = explicit
    ? `Model "${model}" is not served by any of your provider connections: it selects provider "${explicit.provider}", which has no connection (${have}).`
    : `Model "${model}" is not served by any of your provider connections (${have}).`;
  return modelNotFound(model, message);
}

function envName(id: string): string {
  return id.toUpperCase().replace(/-/g, '_');
}

function parseBaseUrl(id: string, raw: string): URL {
  try {
    const url = new URL(raw);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // falls through to the error naming the setting
  }
  throw new Error(`PROVIDER_BASE_URL_${envName(id)}: "${raw}" is not an absolute http(s) URL`);
}
