// One log line per request, with its id, method, path, status and duration.
// The query string is left out: it is the one part of a URL a client might put a secret in.
// Written through the root logger with the id as a member, the same line a request's child
// would write, so that a request that logs nothing else never makes one (src/request-logger.ts).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { REQUEST_ID_LABEL, type PinoLike } from '../request-logger.js';

async function requestLog(app: FastifyInstance) {
  const log = app.log as PinoLike;
  app.addHook('onResponse', async (request, reply) => {
    if (!log.isLevelEnabled('info')) return;
    log.info(
      {
        [REQUEST_ID_LABEL]: request.id,
        method: request.method,
        path: request.url.split('?')[0],
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
        // Set by routes that call providers: which one answered, and every attempt.
        provider: reply.getHeader('x-ladder-provider'),
        attempts: reply.getHeader('x-ladder-attempts'),
      },
      'request completed',
    );
  });
}

export default fp(requestLog, { name: 'request-log', fastify: '5.x' });
