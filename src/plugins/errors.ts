// Turns every failure into the spec's error envelope: our ApiErrors, Fastify's own errors
// (bad JSON, wrong content type, body too large, schema violations), unknown routes and
// wrong methods. Internals of unexpected failures are logged, never sent.
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, databaseUnavailable, httpVersionNotSupported, internalError, invalidRequest } from '../errors.js';
import { loggableError, sqlState } from '../db/errors.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { createRouteIndex } from './route-index.js';
import { validationError } from './validation-errors.js';

const FASTIFY_CODES: Record<string, (e: FastifyError) => ApiError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new ApiError(415, 'invalid_request_error', 'unsupported_media_type', 'Request bodies must be JSON: send `Content-Type: application/json`.'),
  FST_ERR_CTP_BODY_TOO_LARGE: () =>
    new ApiError(413, 'invalid_request_error', 'request_too_large', 'The request body is larger than this server accepts.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    invalidRequest('invalid_json', 'The request has `Content-Type: application/json` but an empty body.'),
  // Fastify reports prototype-poisoning keys with the same error as a syntax error.
  FST_ERR_CTP_INVALID_JSON_BODY: () =>
    invalidRequest('invalid_json', 'The request body is not valid JSON, or has a forbidden "__proto__" or "constructor.prototype" key.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    invalidRequest('invalid_content_length', 'The Content-Length header does not match the body.'),
};

/** For errors Fastify raises before routing (bad percent-encoding, over-long path segments). */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError(414, 'invalid_request_error', 'uri_too_long', 'A segment of the URL path is longer than this server accepts.')
      : invalidRequest('invalid_url', 'The URL is not validly percent-encoded.');
  void reply.code(apiError.statusCode).header('x-request-id', request.id).send(apiError.toBody());
}

// Sockets that got their answer. Node's parser keeps failing on each later chunk of the same
// request (the rest of 64 KB of headers), calling us again: destroying the socket then would
// reset it before the client read our answer, so its bytes are left to drain instead.
const answered = new WeakSet<Duplex>();
// How long a client that goes on sending after its answer may keep the connection.
const DRAIN_AFTER_ANSWER_MS = 5_000;

/** For connections whose bytes are not a well-formed HTTP request: answered on the raw socket. */
export function writeClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code !== 'ECONNRESET' && answered.has(socket)) return;
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  const drained = setTimeout(() => socket.destroy(), DRAIN_AFTER_ANSWER_MS).unref();
  socket.once('close', () => clearTimeout(drained));
  const [status, reason, apiError] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', new ApiError(431, 'invalid_request_error', 'headers_too_large', 'The request headers are larger than this server accepts.')]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', new ApiError(408, 'invalid_request_error', 'request_timeout', 'The request was not received in time.')]
        : [400, 'Bad Request', invalidRequest('malformed_request', 'The request is not well-formed HTTP/1.1.')];
  const body = JSON.stringify(apiError.toBody());
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

// PostgreSQL refuses NUL in text (22021) and \u0000 in jsonb (22P05); that is the input's fault.
const NUL_REFUSED = new Set(['22021', '22P05']);

export function toApiError(error: FastifyError | Error): ApiError {
  if (error instanceof ApiError) return error;
  if (NUL_REFUSED.has(sqlState(error) ?? '')) {
    return invalidRequest('invalid_characters', 'Text in the request contains the NUL character (\\u0000), which cannot be stored.');
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return validationError(fastifyError.validation, fastifyError.validationContext ?? 'body');
  const mapped = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (mapped) return mapped(fastifyError);
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) return FASTIFY_CODES.FST_ERR_CTP_INVALID_JSON_BODY!(fastifyError);
  const status = fastifyError.statusCode ?? 500;
  if (status >= 400 && status < 500) return new ApiError(status, 'invalid_request_error', 'invalid_request', error.message);
  // Only what would be our fault: a client resetting mid-body also carries ECONNRESET, with a 400.
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  return internalError();
}

/**
 * What a failed request's log line says. Our own errors are described by code, status and
 * message only: a ladder run's error carries its trace, prompts and outputs, which must never
 * reach a log. An unexpected error (a bug) keeps its name, message and stack.
 */
export function failureLogFields(error: Error, apiError: ApiError): Record<string, unknown> {
  const fields: Record<string, unknown> = { code: apiError.code, status: apiError.statusCode };
  if (!(error instanceof ApiError)) return { ...fields, err: bugFields(error) };
  fields.error_message = error.message;
  const bug = error.cause instanceof Error && !(error.cause instanceof ApiError) ? error.cause : null;
  return bug ? { ...fields, err: bugFields(bug) } : fields;
}

function bugFields(error: Error): unknown {
  const safe = loggableError(error);
  return safe instanceof Error ? { type: safe.name, message: safe.message, stack: safe.stack } : safe;
}

/**
 * Removes the headers Node would refuse to send. Headers made from a caller's or vendor's text
 * go through src/http/header-value.ts; this is the last line for any that did not, so that a
 * bad header costs the answer its header, never its envelope (Fastify would otherwise answer
 * its own FST_ERR_FAILED_ERROR_SERIALIZATION 500). Returns the names removed.
 */
export function dropUnsendableHeaders(reply: FastifyReply): string[] {
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    try {
      validateHeaderName(name);
      for (const one of Array.isArray(value) ? value : [value]) if (one !== undefined) validateHeaderValue(name, String(one));
    } catch {
      reply.removeHeader(name);
      dropped.push(name);
    }
  }
  return dropped;
}

async function errorsPlugin(app: FastifyInstance) {
  const routes = createRouteIndex();
  app.addHook('onRoute', (route) => routes.add(route.url, route.method));

  // While shutting down, requests that still arrive on open connections get a retryable 503.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Node's parser accepts any HTTP/d.d, and a request line without a version (HTTP/0.9).
    if (request.raw.httpVersionMajor !== 1) {
      reply.header('connection', 'close');
      throw httpVersionNotSupported(request.raw.httpVersion);
    }
    // Node leaves this check to us (transport/envelope-only.ts), so that it is in the envelope.
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      throw invalidRequest('missing_host_header', 'An HTTP/1.1 request must have a Host header.');
    }
    if (closing) {
      reply.header('connection', 'close');
      throw new ApiError(503, 'api_error', 'shutting_down', 'The server is shutting down; retry the request.');
    }
  });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    if (apiError.statusCode >= 500) request.log.error(failureLogFields(error, apiError), 'request failed');
    else request.log.info({ code: apiError.code, status: apiError.statusCode }, apiError.message);
    const dropped = dropUnsendableHeaders(reply);
    if (dropped.length > 0) request.log.error({ headers: dropped }, 'response headers that cannot be sent were dropped');
    void reply.code(apiError.statusCode).headers(apiError.headers).send(apiError.toBody());
  });

  /** No route of this method owns the path: 405 naming the methods that do, else 404. */
  const routeMiss = (request: FastifyRequest): ApiError => {
    const path = request.url.split('?')[0]!;
    const allowed = routes.allowedMethods(path);
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    // A route that exists for this method but found nothing (a missing static file) is a 404.
    return allowed.length > 0 && !allowed.includes(method)
      ? new ApiError(405, 'invalid_request_error', 'method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(' or ')}.`, null, {
          allow: allowed.join(', '),
        })
      : new ApiError(404, 'invalid_request_error', 'unknown_route', `Unknown request URL: ${request.method} ${path}.`);
  };

  // Runs before authentication, so a wrong method on a fixed path is never a ladder 404 or a 401.
  app.addHook('onRequest', async (request) => {
    const url = request.routeOptions.url;
    if (url !== undefined && !routes.owns(url, request.url.split('?')[0]!)) throw routeMiss(request);
  });

  app.setNotFoundHandler((request, reply) => {
    const error = routeMiss(request);
    void reply.code(error.statusCode).headers(error.headers).send(error.toBody());
  });
}

export default fp(errorsPlugin, { name: 'errors', fastify: '5.x' });
