// One log line per request, with its id, method, path, status and duration.
// The query string is left out: it is the one part of a URL a client might put a secret in.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

async function requestLog(app: FastifyInstance) {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
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
