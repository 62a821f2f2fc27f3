// Every way a vendor call can fail, as one typed family built by one factory. The router decides
// fallback from `kind` alone, so no other module inspects raw statuses or socket error codes.
import { storableText } from '../unicode.js';

export type VendorErrorKind =
  | 'rate_limit'
  | 'auth'
  | 'bad_request'
  | 'not_found'
  | 'server'
  | 'upstream_status'
  | 'connection'
  | 'endpoint_not_allowed'
  | 'timeout'
  | 'abort'
  | 'bad_response'
  | 'too_large';

export interface VendorErrorInit {
  provider: string;
  kind: VendorErrorKind;
  /** HTTP status from the vendor; null when no response arrived. */
  status: number | null;
  /** Short human reason, without the provider prefix. */
  detail: string;
  requestId?: string | null;
  retryAfterMs?: number | null;
}

export class VendorError extends Error {
  override readonly name: string = 'VendorError';
  readonly provider: string;
  readonly kind: VendorErrorKind;
  readonly status: number | null;
  readonly detail: string;
  readonly requestId: string | null;
  readonly retryAfterMs: number | null;

  constructor(init: VendorErrorInit) {
    super(`${init.provider}: ${init.detail}`);
    this.provider = init.provider;
    this.kind = init.kind;
    this.status = init.status;
    this.detail = init.detail;
    this.requestId = init.requestId ?? null;
    this.retryAfterMs = init.retryAfterMs ?? null;
  }
}

export class RateLimitError extends VendorError { override readonly name = 'RateLimitError'; }
export class AuthenticationError extends VendorError { override readonly name = 'AuthenticationError'; }
export class BadRequestError extends VendorError { override readonly name = 'BadRequestError'; }
export class NotFoundError extends VendorError { override readonly name = 'NotFoundError'; }
export class ServerError extends VendorError { override readonly name = 'ServerError'; }
export class UpstreamStatusError extends VendorError { override readonly name = 'UpstreamStatusError'; }
export class ConnectionError extends VendorError { override readonly name = 'ConnectionError'; }
export class EndpointNotAllowedError extends VendorError { override readonly name = 'EndpointNotAllowedError'; }
export class TimeoutError extends VendorError { override readonly name = 'TimeoutError'; }
export class AbortError extends VendorError { override readonly name = 'AbortError'; }
export class BadResponseError extends VendorError { override readonly name = 'BadResponseError'; }
export class ResponseTooLargeError extends VendorError { override readonly name = 'ResponseTooLargeError'; }

const classes: Record<VendorErrorKind, new (init: VendorErrorInit) => VendorError> = {
  rate_limit: RateLimitError,
  auth: AuthenticationError,
  bad_request: BadRequestError,
  not_found: NotFoundError,
  server: ServerError,
  upstream_status: UpstreamStatusError,
  connection: ConnectionError,
  endpoint_not_allowed: EndpointNotAllowedError,
  timeout: TimeoutError,
  abort: AbortError,
  bad_response: BadResponseError,
  too_large: ResponseTooLargeError,
};

/** The HTTP statuses that are the request's own fault: another provider would refuse it too. */
export const REQUEST_FAULT_STATUSES: ReadonlySet<number> = new Set([400, 404, 413, 422]);

export function kindForStatus(status: number): VendorErrorKind {
  if (status === 429) return 'rate_limit';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (REQUEST_FAULT_STATUSES.has(status)) return 'bad_request';
  if (status >= 500) return 'server';
  // 3xx (redirects are never followed), 402, 408, 409 and other 4xx: specific to this connection.
  return 'upstream_status';
}

const MAX_VENDOR_MESSAGE = 500;

export interface StatusErrorInit {
  provider: string;
  status: number;
  /** The vendor's own message, when its error body had one. */
  vendorMessage?: string | undefined;
  /** Overrides the kind derived from the status (e.g. Gemini's 400 for a bad key). */
  kind?: VendorErrorKind | undefined;
  /** Custom endpoints: their bodies may be anything (an intranet page), so never repeat them. */
  opaque: boolean;
  apiKey: string;
  requestId?: string | null;
  retryAfterMs?: number | null;
}

/** The factory: a vendor's HTTP error response, normalised. */
export function statusError(init: StatusErrorInit): VendorError {
  const kind = init.kind ?? kindForStatus(init.status);
  // Auth failures keep no vendor text: some vendors quote a masked form of the key back.
  const useVendorText = !init.opaque && kind !== 'auth' && init.vendorMessage;
  const detail = useVendorText
    ? `${redact(init.vendorMessage!, init.apiKey)} (HTTP ${init.status})`
    : `${genericText(kind, init.status)} (HTTP ${init.status})`;
  return new classes[kind]({
    provider: init.provider,
    kind,
    status: init.status,
    detail,
    requestId: init.requestId ?? null,
    retryAfterMs: init.retryAfterMs ?? null,
  });
}

/** The factory: a failure without an HTTP status (socket, timer, parse). */
export function transportError(
  provider: string,
  kind: Exclude<VendorErrorKind, 'rate_limit' | 'auth' | 'bad_request' | 'not_found' | 'server' | 'upstream_status'>,
  detail: string,
  status: number | null = null,
  requestId: string | null = null,
): VendorError {
  return new classes[kind]({ provider, kind, status, detail, requestId });
}

function genericText(kind: VendorErrorKind, status: number): string {
  switch (kind) {
    case 'rate_limit': return 'rate limited';
    case 'auth': return 'authentication failed, the stored API key was refused';
    case 'bad_request': return 'the request was rejected';
    case 'not_found': return 'not found';
    case 'server': return 'server error';
    default: return status >= 300 && status < 400 ? 'unexpected redirect, not followed' : 'request failed';
  }
}

/** Shortest run of the key's characters that counts as a fragment of it. */
export const KEY_FRAGMENT_CHARS = 8;

/**
 * Vendor text as it may leave the service: the key removed first (in any ASCII case, and every
 * run of KEY_FRAGMENT_CHARS or more of its characters), then cut to MAX_VENDOR_MESSAGE
 * characters, then made storable. Cutting first could leave the head of a key that straddles the cut.
 */
export function redact(text: string, apiKey: string): string {
  const clean = removeKey(text, apiKey);
  const cut = clean.length > MAX_VENDOR_MESSAGE ? `${clean.slice(0, MAX_VENDOR_MESSAGE)}…` : clean;
  return storableText(cut);
}

// Folds ASCII letters only, so that positions in the folded text are positions in the original.
const fold = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

function removeKey(text: string, apiKey: string): string {
  if (apiKey.length < 4) return text;
  const haystack = fold(text);
  const key = fold(apiKey);
  // Every window of `size` characters that also occurs in the key is marked; runs of marks are removed.
  const size = Math.min(KEY_FRAGMENT_CHARS, key.length);
  const windows = new Set<string>();
  for (let i = 0; i + size <= key.length; i++) windows.add(key.slice(i, i + size));
  const marked = new Uint8Array(text.length);
  let found = false;
  for (let i = 0; i + size <= haystack.length; i++) {
    if (!windows.has(haystack.slice(i, i + size))) continue;
    marked.fill(1, i, i + size);
    found = true;
  }
  if (!found) return text;
  let out = '';
  for (let i = 0; i < text.length; ) {
    if (!marked[i]) {
      out += text[i++];
      continue;
    }
    while (i < text.length && marked[i]) i++;
    out += '[redacted]';
  }
  return out;
}

/** Reads Retry-After (seconds or HTTP date) and the common millisecond variant; null if absent. */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | null {
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined) {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const raw = first(headers['retry-after']);
  if (raw === undefined) return null;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
