// One log line per request, with its id, method, path, status and duration.
// The query string is left out: it is the one part of a URL a client might put a secret in.
// Written through the root logger with the id as a member, the same line a request's child
// would write, so that a request that logs nothing else never makes one (src/request-logger.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { REQUEST_ID_LABEL, type PinoLike } from '../request-logger.js';

async function requestLog(app: FastifyInstance) {
  const log = app.log as PinoLike;
  // A callback hook, not an async one: fastify then waits on no promise for every request.
  app.addHook('onResponse', (request, reply, done) => {
    if (log.isLevelEnabled('info')) writeLine(log, request, reply);
    done();
  });
}

function writeLine(log: PinoLike, request: FastifyRequest, reply: FastifyReply): void {
  const { url } = request;
  const query = url.indexOf('?');
  log.info(
    {
      [REQUEST_ID_LABEL]: request.id,
      method: request.method,
      path: query === -1 ? url : url.slice(0, query),
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      // Set by routes that call providers: which one answered, and every attempt.
      provider: reply.getHeader('x-ladder-provider'),
      attempts: reply.getHeader('x-ladder-attempts'),
    },
    'request completed',
  );
}

export default fp(requestLog, { name: 'request-log', fastify: '5.x' });
