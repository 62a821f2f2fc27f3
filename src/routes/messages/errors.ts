// The /v1/messages routes answer errors in Anthropic's shape ({type: "error", error: {type,
// message}, request_id}), which Anthropic's SDK reads; every other route keeps the Error
// envelope. The same ApiErrors, statuses and logging as the one error handler (src/plugins/errors.ts).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { dropUnsendableHeaders, failureLogFields, toApiError } from '../../plugins/errors.js';
import type { AnthropicErrorBody } from '../../schemas/messages.js';

type AnthropicErrorType = AnthropicErrorBody['error']['type'];

const BY_STATUS: Record<number, AnthropicErrorType> = {
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  503: 'overloaded_error',
  504: 'timeout_error',
};

export function anthropicErrorType(status: number): AnthropicErrorType {
  return BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

export const anthropicError = (status: number, message: string, requestId: string | null): AnthropicErrorBody => ({
  type: 'error',
  error: { type: anthropicErrorType(status), message },
  request_id: requestId,
});

export function anthropicErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(error);
  if (apiError.statusCode >= 500) request.log.error(failureLogFields(error, apiError), 'request failed');
  else request.log.info({ code: apiError.code, status: apiError.statusCode }, apiError.message);
  const dropped = dropUnsendableHeaders(reply);
  if (dropped.length > 0) request.log.error({ headers: dropped }, 'response headers that cannot be sent were dropped');
  // Our stable error code has no place in Anthropic's body: it goes in a header.
  void reply
    .code(apiError.statusCode)
    .headers(apiError.headers)
    .header('x-ladder-error-code', apiError.code)
    .send(anthropicError(apiError.statusCode, apiError.message, request.id));
}
