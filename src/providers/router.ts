// The fallback router: candidates in order, circuit breaker, one policy for fallback and retry,
// and the error a caller sees when nothing answered.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { ApiError } from '../errors.js';
import { abortScope, realSignal, type CallerSignal } from '../abort-scope.js';
import { adapters } from './adapters/index.js';
import { tracedExchange, type AttemptOperation, type AttemptTracer } from './attempt-tracer.js';
import { CircuitBreaker, circuitKey, type BreakerOptions } from './breaker.js';
import { LastErrors, type LastError } from './last-errors.js';
import { callVendor, type CallDeadline, type VendorExchange } from './call-vendor.js';
import { candidatesFor, type Candidate } from './catalog.js';
import { embeddingCandidates, embeddingExchange, type EmbeddingResult } from './embeddings/route.js';
import type { EmbeddingRequest } from './embeddings/types.js';
import { countingCandidates, countingExchange, type TokenCount } from './messages/count-tokens.js';
import type { MessagesBody } from './messages/types.js';
import type { VendorAdapter, VendorModel } from './adapters/types.js';
import { createModelLists } from './model-list.js';
import { REASONS, countsAgainstConnection, fallsBack, retryDelayMs } from './policy.js';
import { allFailed, final, notServed, requestTimedOut } from './route-errors.js';
import { openVendorStream } from './stream/open-stream.js';
import type { StreamLimits } from './stream/stream-guard.js';
import type { RoutedStream } from './stream/routed-stream.js';
import { createTargets } from './targets.js';
import { createTransport, type Transport } from './transport.js';
import type { Attempt, ChatRequest, ChatResult, ProviderConnection } from './types.js';
import { VendorError, transportError } from './vendor-errors.js';

export interface RouterLogger {
  /** pino's: when debug is off, a successful attempt's line is not even built. */
  isLevelEnabled?(level: string): boolean;
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
  /** Largest accepted embeddings answer (2,048 vectors). Default 64 MiB. */
  maxEmbeddingsResponseBytes?: number;
  /** Streams: first-byte (per attempt), idle and total limits. Default 60 s, 60 s, 10 min; events up to maxResponseBytes. */
  stream?: Partial<Omit<StreamLimits, 'maxEventChars'>>;
  /** Told of every vendor attempt, for a span each (src/telemetry/). Default: none. */
  tracer?: AttemptTracer;
}

export { ProviderRouteError } from './route-errors.js';

/** One way of exchanging with a vendor: a whole answer, a stream opened up to its first chunk, embeddings, a token count. */
interface Exchange<T> {
  operation: AttemptOperation;
  /** The exchange ends its attempt at `call.deadline` itself (postJson and a stream's opening do): the router then needs no scope and no timer of its own. */
  keepsDeadline?: boolean;
  /** The vendor's body as text; throws a 400 ApiError for what this vendor cannot express (the candidate is skipped). */
  body(adapter: VendorAdapter, vendorModel: string): string;
  send(call: VendorExchange): Promise<T & { status: number; requestId: string | null }>;
}

interface Routed<T> {
  sent: T;
  candidate: Candidate;
  attempts: Attempt[];
  upstreamMs: number;
}

export interface ProviderRouter {
  /** `log` replaces the router's logger for this call (e.g. a request's, to carry its id). */
  call(request: ChatRequest, connections: ProviderConnection[], signal?: CallerSignal, log?: RouterLogger): Promise<ChatResult>;
  /**
   * The same call streamed: resolves once the first chunk is in hand (fallback happens before
   * it), with the stream to read on. `signal` also cancels the stream later on.
   */
  stream(request: ChatRequest, connections: ProviderConnection[], signal?: CallerSignal, log?: RouterLogger): Promise<RoutedStream>;
  /** Embeddings (POST /v1/embeddings) from the connections whose vendor has them, with the same fallback. */
  embed(request: EmbeddingRequest, connections: ProviderConnection[], signal?: CallerSignal, log?: RouterLogger): Promise<EmbeddingResult>;
  /** A Messages request's input tokens, from the first connection for `model` whose vendor counts them. */
  countTokens(model: string, body: MessagesBody, connections: ProviderConnection[], signal?: AbortSignal, log?: RouterLogger, betas?: string): Promise<TokenCount>;
  /** The vendor's own model list for a connection (cached for a minute); null when it has none. */
  listModels(connection: ProviderConnection): Promise<VendorModel[] | null>;
  close(): Promise<void>;
  /** The state of one circuit, named by circuitKey(connection) (read by metrics at scrape time). */
  circuitState(circuit: string): ReturnType<CircuitBreaker['state']>;
  /** The connection's circuit and its last failed attempt on this node (GET /v1/providers). */
  health(connection: ProviderConnection): { circuit_state: ReturnType<CircuitBreaker['state']>; last_error: LastError | null };
}

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
  const lastErrors = new LastErrors(options.breaker?.maxCircuits);

  const targetFor = createTargets(transport, options.baseUrls ?? {}, allowPrivate);

  const limits: StreamLimits = {
    firstByteMs: options.stream?.firstByteMs ?? 60_000,
    idleMs: options.stream?.idleMs ?? 60_000,
    maxDurationMs: options.stream?.maxDurationMs ?? 600_000,
    maxEventChars: maxResponseBytes,
  };

  async function call(request: ChatRequest, connections: ProviderConnection[], signal?: CallerSignal, log = logger): Promise<ChatResult> {
    const whole: Exchange<Awaited<ReturnType<typeof callVendor>>> = {
      operation: 'chat',
      keepsDeadline: true,
      body: (adapter, vendorModel) => vendorBody(adapter, request, vendorModel, false),
      send: (c) => callVendor(Object.assign(c, { request, headers: c.adapter.requestHeaders?.(request) })),
    };
    const { sent, candidate, attempts, upstreamMs } = await route(chatCandidates(request.model, connections), signal, log, whole);
    // Object.assign rather than `{ ...output, more }`: Node 20's V8 builds the latter on a slow path (µs per call).
    return Object.assign({}, sent.output, { model: sent.output.model ?? candidate.vendorModel, provider: candidate.connection.provider, attempts, upstreamMs });
  }

  async function stream(request: ChatRequest, connections: ProviderConnection[], signal?: CallerSignal, log = logger): Promise<RoutedStream> {
    const streamed: Exchange<Awaited<ReturnType<typeof openVendorStream>>> = {
      operation: 'chat',
      keepsDeadline: true,
      body: (adapter, vendorModel) => vendorBody(adapter, request, vendorModel, true),
      send: (c) => openVendorStream(Object.assign(c, { request, limits, headers: c.adapter.requestHeaders?.(request) })),
    };
    const { sent, candidate, attempts, upstreamMs } = await route(chatCandidates(request.model, connections), signal, log, streamed);
    return { stream: sent.stream, model: candidate.vendorModel, provider: candidate.connection.provider, attempts, upstreamMs };
  }

  async function embed(request: EmbeddingRequest, connections: ProviderConnection[], signal?: CallerSignal, log = logger): Promise<EmbeddingResult> {
    const { sent, candidate, attempts, upstreamMs } = await route(embeddingCandidates(request.model, connections), signal, log, embeddingExchange(request, options.maxEmbeddingsResponseBytes ?? 64 * 1024 * 1024));
    return Object.assign({}, sent.output, { model: sent.output.model ?? candidate.vendorModel, provider: candidate.connection.provider, attempts, upstreamMs });
  }

  async function countTokens(model: string, body: MessagesBody, connections: ProviderConnection[], signal?: AbortSignal, log = logger, betas?: string): Promise<TokenCount> {
    const { sent, candidate, attempts, upstreamMs } = await route(countingCandidates(model, connections), signal, log, countingExchange(body, betas));
    return { inputTokens: sent.output, provider: candidate.connection.provider, attempts, upstreamMs };
  }

  function chatCandidates(model: string, connections: ProviderConnection[]): Candidate[] {
    const candidates = candidatesFor(model, connections);
    if (candidates.length === 0) throw notServed(model, connections);
    return candidates;
  }

  /** `candidates`: never empty (each kind of call says itself why none can serve it). */
  async function route<T>(candidates: Candidate[], signal: CallerSignal | undefined, log: RouterLogger | undefined, exchange: Exchange<T>): Promise<Routed<T>> {
    // One deadline for the whole call (for a stream: its opening): N hanging connections cost requestTimeoutMs, not N attempts.
    const deadline: CallDeadline = { at: performance.now() + requestTimeoutMs, passed: false };
    const sent = options.tracer ? tracedExchange(exchange, options.tracer) : exchange;
    // A whole answer's attempt and a stream's opening stop at the deadline by their own timer; the caller's signal goes to them as it is.
    if (exchange.keepsDeadline) return attemptAll(candidates, signal, deadline, log, sent);
    const scope = abortScope(signal);
    const timer = setTimeout(() => {
      deadline.passed = true;
      scope.abort(DEADLINE);
    }, requestTimeoutMs);
    try {
      return await attemptAll(candidates, scope.signal, deadline, log, sent);
    } finally {
      clearTimeout(timer);
      scope.dispose();
    }
  }

  async function attemptAll<T>(candidates: Candidate[], signal: CallerSignal | undefined, deadline: CallDeadline, log: RouterLogger | undefined, exchange: Exchange<T>): Promise<Routed<T>> {
    const attempts: Attempt[] = [];
    const failures: VendorError[] = [];
    let upstreamMs = 0;
    let translationError: ApiError | null = null;
    const pastDeadline = () => deadline.passed;
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
        body = exchange.body(adapter, candidate.vendorModel);
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
          const sent = await exchange.send({
            adapter,
            provider: connection.provider,
            target,
            apiKey: connection.apiKey,
            vendorModel: candidate.vendorModel,
            body,
            timeoutMs,
            maxResponseBytes,
            signal,
            deadline,
          });
          const latencyMs = performance.now() - started;
          upstreamMs += latencyMs;
          breaker.success(circuit);
          attempts.push(record(log, candidate, sent.status, 'ok', undefined, latencyMs, sent.requestId));
          return { sent, candidate, attempts, upstreamMs };
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
          // The caller hanging up says nothing about the connection.
          if (caught.kind !== 'abort') lastErrors.record(circuit, REASONS[caught.kind], caught.status);
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
          const left = deadline.at - waitStarted;
          try {
            await sleep(Math.max(0, Math.min(delay, left)), undefined, { signal: realSignal(signal) });
          } catch {
            if (pastDeadline()) throw requestTimedOut(requestTimeoutMs, attempts, upstreamMs);
            throw final(transportError(connection.provider, 'abort', 'request aborted by the caller'), attempts, upstreamMs);
          }
          if (left <= delay) {
            deadline.passed = true;
            throw requestTimedOut(requestTimeoutMs, attempts, upstreamMs);
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
    if (log && (outcome !== 'ok' || log.isLevelEnabled?.('debug') !== false)) {
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
    stream,
    embed,
    countTokens,
    listModels: (connection) => modelLists.get(connection, targetFor(connection)),
    close: () => transport.close(),
    circuitState: (circuit) => breaker.state(circuit), // metrics: circuit gauges
    health: (connection) => {
      const circuit = circuitKey(connection);
      return { circuit_state: breaker.state(circuit), last_error: lastErrors.get(circuit) };
    },
  };
}

/** The vendor's body as text; throws a 400 ApiError for what this vendor cannot express. */
function vendorBody(adapter: VendorAdapter, request: ChatRequest, vendorModel: string, streaming: boolean): string {
  const body = adapter.toVendor(request, vendorModel);
  if (!streaming) return JSON.stringify(body);
  if (!adapter.stream) throw new ApiError(400, 'invalid_request_error', 'unsupported_parameter', `${adapter.id} cannot stream`, 'stream');
  return JSON.stringify(adapter.stream.body(body as Record<string, unknown>));
}
