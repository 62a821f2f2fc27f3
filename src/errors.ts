// The one catalog of errors the API returns. Every failure becomes an ApiError before it
// reaches the error handler, which renders the spec's envelope {error: {message, type, code, param}}.

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'insufficient_quota'
  | 'rate_limit_error'
  | 'execution_error'
  | 'upstream_error'
  | 'api_error';

export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly statusCode: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

export interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

export const invalidRequest = (code: string, message: string, param: string | null = null) =>
  new ApiError(400, 'invalid_request_error', code, message, param);

export const missingField = (param: string) =>
  invalidRequest('missing_required_field', `Missing required field: ${param}.`, param);

export const unauthenticated = (message: string, code = 'invalid_api_key') =>
  new ApiError(401, 'authentication_error', code, message);

export const notFound = (code: string, message: string) =>
  new ApiError(404, 'invalid_request_error', code, message);

export const conflict = (code: string, message: string, param: string | null = null) =>
  new ApiError(409, 'invalid_request_error', code, message, param);

/** The one answer for an instance that is unknown, malformed, or another account's. */
export const instanceNotFound = (id: string) => notFound('instance_not_found', `Instance "${id}" was not found.`);

export const instanceAlreadyFinished = (id: string, status: string) =>
  conflict('instance_already_finished', `Instance "${id}" has already finished (${status}); only a pending or running instance can be cancelled.`);

export const instanceNotFinished = (id: string, status: string) =>
  conflict('instance_not_finished', `Instance "${id}" is still ${status}; only a completed, failed or cancelled instance can be rerun.`);

export const invalidIdempotencyKey = () =>
  invalidRequest('invalid_idempotency_key', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.', 'Idempotency-Key');

export const idempotencyKeyReused = () =>
  conflict(
    'idempotency_key_reused',
    'This Idempotency-Key was already used in the last 24 hours with a different request body; use a new key for a different request.',
    'Idempotency-Key',
  );

export const invalidCursor = () =>
  invalidRequest('invalid_cursor', 'The `after` cursor is not one this API returned; pass a `next_cursor` unchanged.', 'after');

export const httpVersionNotSupported = (version: string) =>
  new ApiError(
    505,
    'invalid_request_error',
    'http_version_not_supported',
    version === '0.9'
      ? 'The request line has no HTTP version: send HTTP/1.1.'
      : `HTTP/${version.slice(0, 10)} is not supported: send HTTP/1.1.`,
  );

export const unsupportedContentEncoding = (encoding: string) =>
  new ApiError(
    415,
    'invalid_request_error',
    'unsupported_content_encoding',
    `Content-Encoding ${JSON.stringify(encoding.slice(0, 100))} is not supported: send the request body uncompressed.`,
    'content-encoding',
  );

export const internalError = () =>
  new ApiError(500, 'api_error', 'internal_error', 'The server had an error while processing your request.');

/** The database did not answer (down, restarting, out of connections): retry shortly. */
export const databaseUnavailable = () =>
  new ApiError(503, 'api_error', 'database_unavailable', 'The database is not reachable; retry the request.', null, { 'retry-after': '1' });

/** Every event stream this process may serve is open (SSE_MAX_STREAMS). */
export const tooManyStreams = () =>
  new ApiError(503, 'api_error', 'too_many_streams', 'This server is serving as many event streams as it may; retry shortly.', null, { 'retry-after': '5' });

/** The caller's account holds its share of the event streams (SSE_MAX_STREAMS_PER_ACCOUNT). */
export const tooManyAccountStreams = (limit: number) =>
  new ApiError(
    429,
    'rate_limit_error',
    'too_many_account_streams',
    `This account already has ${limit} event streams open, as many as it may; close one or retry shortly.`,
    null,
    { 'retry-after': '5' },
  );

/** The caller hung up before the answer was ready (nginx's 499); nobody reads the body. */
export const clientClosedRequest = () =>
  new ApiError(499, 'invalid_request_error', 'client_closed_request', 'The client closed the connection before the response was ready.');

// ---- Quotas (docs/quotas.md) ----
/** A limit of the caller's account or key refused the request; it passes through ladder runs unchanged. */
export class LimitError extends ApiError {}

export const rateLimitExceeded = (message: string, headers: Record<string, string>) =>
  new LimitError(429, 'rate_limit_error', 'rate_limit_exceeded', message, null, headers);

export const quotaExceeded = (message: string) =>
  new LimitError(402, 'insufficient_quota', 'quota_exceeded', message);

// ---- Webhooks (docs/webhooks.md) ----
/** The one answer for a webhook endpoint that is unknown, malformed, or another account's. */
export const webhookNotFound = (id: string) => notFound('webhook_not_found', `Webhook endpoint "${id}" was not found.`);
