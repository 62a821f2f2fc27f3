// One port, HTTPS only. A client that speaks plain HTTP to it gets an immediate, readable
// HTTP 400 in our error envelope instead of a TLS alert or a hang: the first byte of each
// connection tells a TLS handshake (0x16) from plain text, and the socket is handed to the
// TLS server or to a tiny plain server that only ever answers `https_required`.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { ApiError } from '../errors.js';
import { writeClientError } from '../plugins/errors.js';
import { answerOnlyInEnvelope, sendRawError } from './envelope-only.js';

const TLS_HANDSHAKE = 0x16;
// A connection that sends nothing at all is dropped after this long.
const FIRST_BYTE_TIMEOUT_MS = 10_000;

export const httpsRequired = () =>
  new ApiError(400, 'invalid_request_error', 'https_required', 'This service only accepts HTTPS. Resend the request to the https:// URL.');

export function sendHttpsRequired(res: http.ServerResponse, requestId: string = randomUUID()): void {
  sendRawError(res, httpsRequired(), requestId);
}

export function createHttpsOnlyServer(
  options: https.ServerOptions,
  handler: http.RequestListener,
): https.Server {
  const server = https.createServer(options, handler);
  const plain = http.createServer((req, res) => {
    // Drain whatever body was sent so the client reads our answer instead of a reset.
    req.resume();
    sendHttpsRequired(res);
  });

  const tlsListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    // A client that resets the connection must never take the process down with it: the raw
    // socket gets no error listener from anyone else before (or, for TLS, after) the hand-over.
    socket.on('error', () => socket.destroy());
    socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, () => socket.destroy());
    socket.once('data', (chunk: Buffer) => {
      socket.setTimeout(0);
      socket.pause();
      // Put the byte back: both servers must read the connection from its start.
      socket.unshift(chunk);
      if (chunk[0] === TLS_HANDSHAKE) for (const listener of tlsListeners) listener.call(server, socket);
      else plain.emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  plain.on('clientError', writeClientError);
  // Whatever a plain-HTTP request expects or asks to CONNECT to, the answer is https_required.
  answerOnlyInEnvelope(plain, httpsRequired);
  server.on('close', () => plain.closeAllConnections());
  return server;
}
