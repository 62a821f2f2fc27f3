// GET /metrics on the main listener, for Prometheus, when METRICS_TOKEN is set: the
// token as a bearer credential, compared in constant time. Otherwise the path is unknown.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { unauthenticated } from '../../errors.js';
import { errorResponses } from '../../schemas/common.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

const metricsRoute: FastifyPluginAsyncTypebox = async (app) => {
  const { token } = app.config.metrics;
  if (token === null || !app.metrics.enabled) return;
  const expected = digest(token);
  const requireMetricsToken = async (request: FastifyRequest) => {
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      throw unauthenticated('Missing or invalid metrics token. Send `Authorization: Bearer <METRICS_TOKEN>`.', 'invalid_metrics_token');
    }
  };

  app.get('/metrics', {
    onRequest: requireMetricsToken,
    // An operator's endpoint, like the admin API's token, so it stays out of the public reference.
    schema: { hide: true, operationId: 'scrapeMetrics', response: { 200: Type.String({ description: 'Prometheus text format 0.0.4' }), ...errorResponses(401) } },
  }, async (_request, reply) => {
    const body = await app.metrics.scrape();
    void reply.type(app.metrics.contentType);
    return body;
  });
};

export default metricsRoute;
