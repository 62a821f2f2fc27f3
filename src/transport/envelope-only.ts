// Node's HTTP server answers some requests on its own, before any handler of ours runs: an
// `Expect` other than 100-continue (a bare 417), an HTTP/1.1 request without `Host` (a bare
// 400), CONNECT (the socket is dropped). This routes each of them to our envelope instead.
// Malformed HTTP is answered by clientErrorHandler (plugins/errors.ts), everything else by Fastify.
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, invalidRequest } from '../errors.js';

export const expectationFailed = (expectation: string) =>
  new ApiError(
    417,
    'invalid_request_error',
    'expectation_failed',
    `Unsupported Expect header ${JSON.stringify(expectation.slice(0, 100))}: only "100-continue" is supported.`,
    'expect',
  );

export const connectNotSupported = () =>
  invalidRequest('unsupported_method', 'CONNECT is not supported: this service is not a proxy.');

/** Writes an error in the envelope on a raw response, outside Fastify, and closes the connection. */
export function sendRawError(res: http.ServerResponse, error: ApiError, requestId: string = randomUUID()): void {
  const body = JSON.stringify(error.toBody());
  res.writeHead(error.statusCode, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    connection: 'close',
    ...error.headers,
  });
  res.end(body);
}

/** The same on a socket that has no response object (CONNECT). */
export function writeRawError(socket: Duplex, error: ApiError, reason: string): void {
  const body = JSON.stringify(error.toBody());
  socket.end(
    `HTTP/1.1 ${error.statusCode} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Makes `server` leave no request to Node's own bare answers. `answer` overrides what an
 * unsupported expectation or a CONNECT gets (the plain-HTTP refusal answers https_required).
 */
export function answerOnlyInEnvelope(server: http.Server, answer?: () => ApiError): void {
  // Fastify answers a missing Host itself, in the envelope (plugins/errors.ts).
  (server as http.Server & { requireHostHeader: boolean }).requireHostHeader = false;
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => {
    // The body was not invited; drain what came anyway so the client reads the answer.
    req.resume();
    sendRawError(res, answer?.() ?? expectationFailed(String(req.headers.expect ?? '')));
  });
  server.on('connect', (_req: http.IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    const error = answer?.() ?? connectNotSupported();
    writeRawError(socket, error, error.statusCode === 400 ? 'Bad Request' : 'Error');
  });
}
