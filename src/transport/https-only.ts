// One port, HTTPS only. A client that speaks plain HTTP to it gets an immediate, readable
// HTTP 400 in our error envelope instead of a TLS alert or a hang: the first byte of each
// connection tells a TLS handshake (0x16) from plain text, and the socket is handed to the
// TLS server or to a tiny plain server that only ever answers `https_required`. Until its
// handshake is done, each connection is bounded in time and in number (handshake-guard.ts).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ApiError } from '../errors.js';
import { writeClientError } from '../plugins/errors.js';
import { answerOnlyInEnvelope, sendRawError } from './envelope-only.js';
import { createHandshakeGuard, type HandshakeGuard, type HandshakeLimits } from './handshake-guard.js';

const TLS_HANDSHAKE = 0x16;

export const httpsRequired = () =>
  new ApiError(400, 'invalid_request_error', 'https_required', 'This service only accepts HTTPS. Resend the request to the https:// URL.');

export function sendHttpsRequired(res: http.ServerResponse, requestId: string = randomUUID()): void {
  sendRawError(res, httpsRequired(), requestId);
}

export interface HttpsOnlyServer {
  server: https.Server;
  /** The connections not yet through their handshake (plain-HTTP ones until they close). */
  handshakes: HandshakeGuard;
}

export function createHttpsOnlyServer(
  options: https.ServerOptions,
  handler: http.RequestListener,
  limits: HandshakeLimits,
): HttpsOnlyServer {
  const server = https.createServer(options, handler);
  const handshakes = createHandshakeGuard(limits);
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
    // A plain-HTTP connection stays counted until it closes: its answer is immediate.
    handshakes.admit(socket);
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      // Put the byte back: both servers must read the connection from its start.
      socket.unshift(chunk);
      if (chunk[0] === TLS_HANDSHAKE) for (const listener of tlsListeners) listener.call(server, socket);
      else plain.emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  server.on('secureConnection', (socket: TLSSocket) => handshakes.release(socket));
  // A failed handshake (bad bytes, a reset) has no HTTP answer: the socket is only dropped.
  // https.Server would pass it to clientError, whose answer would wait for ever on a socket
  // that cannot encrypt yet.
  server.removeAllListeners('tlsClientError');
  server.on('tlsClientError', (_error: Error, socket: TLSSocket) => {
    handshakes.release(socket);
    socket.destroy();
  });
  plain.on('clientError', writeClientError);
  // Whatever a plain-HTTP request expects or asks to CONNECT to, the answer is https_required.
  answerOnlyInEnvelope(plain, httpsRequired);
  server.on('close', () => plain.closeAllConnections());
  return { server, handshakes };
}
