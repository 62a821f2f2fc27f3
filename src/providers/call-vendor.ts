// One HTTP exchange with one vendor: send, bound by a total deadline, read (src/providers/collect-body.ts), parse once, normalise.
import type { Dispatcher } from 'undici';
import { ShapeError, type VendorAdapter, type VendorOutput } from './adapters/types.js';
import { forget, whenAborted, type CallerSignal } from '../abort-scope.js';
import { storableJson } from '../unicode.js';
import { BodyCollector, ERROR_BODY_LIMIT, RESPONSE_TOO_LARGE, bodyText, parsedHeaders, rawHeader } from './collect-body.js';
import { ENDPOINT_NOT_ALLOWED } from './ssrf.js';
import type { ChatRequest } from './types.js';
import { VendorError, parseRetryAfter, statusError, transportError } from './vendor-errors.js';

/** Where a connection's requests go, resolved once per base URL. */
export interface Target {
  origin: string;
  /** Path prefix of the base URL, without a trailing slash ('' for none). */
  basePath: string;
  dispatcher: Dispatcher;
  /** User endpoints: their error bodies are never repeated. */
  opaque: boolean;
}

/** One exchange with one vendor, whatever is asked of it (chat, embeddings, token counting). */
export interface VendorExchange {
  adapter: VendorAdapter;
  provider: string;
  target: Target;
  apiKey: string;
  vendorModel: string;
  body: string;
  /** Headers the request itself adds (Anthropic's `anthropic-beta` of a Messages request). */
  headers?: Record<string, string> | undefined;
  timeoutMs: number;
  maxResponseBytes: number;
  signal?: CallerSignal | undefined;
  /** The whole call's deadline; an exchange that keeps it (postJson) stops its attempt there and marks it passed. */
  deadline?: CallDeadline | undefined;
}

/** When a routed call must be over (performance.now() time), and whether an attempt or a wait ran into it. */
export interface CallDeadline {
  at: number;
  passed: boolean;
}

export interface VendorCall extends VendorExchange {
  /** The request the body was made from: some answers are read in its light (e.g. a forced JSON tool). */
  request: ChatRequest;
}

export interface VendorSuccess<T = VendorOutput> {
  output: T;
  status: number;
  requestId: string | null;
}

// What JSON text needs to carry a NUL or a lone surrogate: a \u escape, or a raw NUL or surrogate.
// eslint-disable-next-line no-control-regex -- NUL is exactly what must be found
const MAYBE_UNSTORABLE = /\\u|[\u0000\ud800-\udfff]/;
// Abort reasons, told apart by identity (made once: nothing reads their stacks).
const TIMED_OUT = new Error('timed out');
const DEADLINE_PASSED = new Error('request deadline passed');
const CALLER_ABORTED = new Error('aborted by the caller');

export function callVendor(call: VendorCall): Promise<VendorSuccess> {
  return postJson(call, call.adapter.path(call.target.basePath, call.vendorModel), (parsed) => call.adapter.fromVendor(parsed, call.request));
}

/** POSTs the body to `path` and reads the answer with `parse` (which throws ShapeError for a body not of the vendor's shape). */
export async function postJson<T>(call: VendorExchange, path: string, parse: (body: unknown) => T): Promise<VendorSuccess<T>> {
  const { provider, target, timeoutMs } = call;
  if (call.signal?.aborted) throw transportError(provider, 'abort', 'request aborted by the caller');
  const collector = new BodyCollector(target.dispatcher, {
    origin: target.origin,
    path,
    method: 'POST',
    headers: call.headers ? Object.assign(call.adapter.headers(call.apiKey), call.headers) : call.adapter.headers(call.apiKey),
    body: call.body,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  }, call.maxResponseBytes);
  // The attempt's total time (or what is left of the call's, if less) and the caller hanging up abort the exchange
  // directly: one timer, one listener, no AbortController of its own.
  const { deadline } = call;
  const left = deadline ? deadline.at - performance.now() : timeoutMs;
  const timer = left < timeoutMs
    ? setTimeout(() => {
      deadline!.passed = true;
      collector.abort(DEADLINE_PASSED);
    }, Math.max(0, left))
    : setTimeout(() => collector.abort(TIMED_OUT), timeoutMs);
  const onCallerAbort = () => collector.abort(CALLER_ABORTED);
  // Through the signal's one shared listener: many calls may share a caller's signal (src/abort-scope.ts).
  if (call.signal) whenAborted(call.signal, onCallerAbort);
  try {
    const answer = await collector.answer;
    const { status } = answer;
    const requestId = rawHeader(answer.rawHeaders, call.adapter.requestIdHeader) ?? null;
    if (status < 200 || status >= 300) {
      const text = status >= 300 && status < 400 ? '' : bodyText(answer);
      throw vendorStatusError(call, status, parsedHeaders(answer.rawHeaders), text, requestId);
    }
    const text = bodyText(answer);
    const parsed = parseJson(text);
    if (parsed === undefined) throw transportError(provider, 'bad_response', 'response is not valid JSON', status, requestId);
    try {
      // Vendor text may hold what no database column takes (NUL, lone surrogates): made storable once, here.
      // A body with no escape and no surrogate at all cannot hold either, and is not walked again.
      const output = parse(parsed);
      return { output: MAYBE_UNSTORABLE.test(text) ? storableJson(output) : output, status, requestId };
    } catch (error) {
      const why = error instanceof ShapeError ? error.message : 'could not be read';
      throw transportError(provider, 'bad_response', `unexpected response shape: ${why}`, status, requestId);
    }
  } catch (error) {
    if (error instanceof VendorError) throw error;
    if (error === TIMED_OUT) throw transportError(provider, 'timeout', `no complete response within ${timeoutMs} ms`);
    // The router tells a passed deadline (504) from the caller hanging up by `deadline.passed`.
    if (error === CALLER_ABORTED || error === DEADLINE_PASSED) throw transportError(provider, 'abort', 'request aborted by the caller');
    if (errorCode(error) === RESPONSE_TOO_LARGE) {
      throw tooLarge(provider, call.maxResponseBytes, collector.status, rawHeader(collector.rawHeaders, call.adapter.requestIdHeader) ?? null);
    }
    throw fromSocketError(provider, error, target.opaque, call.maxResponseBytes);
  } finally {
    clearTimeout(timer);
    if (call.signal) forget(call.signal, onCallerAbort);
  }
}

/** A streamed answer's body as failedStatus reads it: its bytes, and a way to stop them. */
export interface ErrorBody extends AsyncIterable<Uint8Array> {
  destroy(error?: Error): unknown;
}

/** A vendor's non-2xx answer to a stream request, a bounded part of its body, normalised. */
export async function failedStatus(call: VendorExchange, response: { statusCode: number; headers: Record<string, string | string[]>; body: ErrorBody }, requestId: string | null): Promise<VendorError> {
  const status = response.statusCode;
  // A redirect's body is read and dropped (the connection stays usable), as undici's dump() did.
  const read = await readText(response.body, ERROR_BODY_LIMIT);
  const text = status >= 300 && status < 400 ? '' : read;
  return vendorStatusError(call, status, response.headers, text, requestId);
}

function vendorStatusError(call: VendorExchange, status: number, headers: Record<string, string | string[] | undefined>, text: string, requestId: string | null): VendorError {
  const parsed = parseJson(text);
  const info = parsed === undefined ? {} : call.adapter.errorInfo(status, parsed);
  return statusError({
    provider: call.provider,
    status,
    vendorMessage: info.message,
    kind: info.kind,
    opaque: call.target.opaque,
    apiKey: call.apiKey,
    requestId,
    retryAfterMs: status === 429 || status === 503 ? parseRetryAfter(headers) : null,
  });
}

// A vendor fault like a bad body: the next candidate may answer within the cap.
function tooLarge(provider: string, maxBytes: number, status: number, requestId: string | null): VendorError {
  return transportError(provider, 'too_large', `response body larger than the ${maxBytes}-byte limit`, status, requestId);
}

export function fromSocketError(provider: string, error: unknown, opaque: boolean, maxBytes: number): VendorError {
  const code = errorCode(error);
  if (code === ENDPOINT_NOT_ALLOWED) {
    return transportError(provider, 'endpoint_not_allowed', 'endpoint resolves to a non-public address, refused');
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return transportError(provider, 'timeout', 'connect timeout');
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return transportError(provider, 'timeout', 'response timeout');
  if (code === RESPONSE_TOO_LARGE) return tooLarge(provider, maxBytes, 200, null);
  // Socket messages can name internal hosts; the code alone is enough to act on.
  const shown = code && /^[A-Z0-9_]+$/.test(code) ? code : 'network error';
  return transportError(provider, 'connection', opaque ? 'connection failed' : `connection failed (${shown})`);
}

function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Reads an error body up to `limit` bytes; past it the text is dropped (the status says enough). */
async function readText(body: ErrorBody, limit: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      return '';
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
