import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { databaseUnavailable } from '../../errors.js';
import { errorResponses, successResponse } from '../../schemas/common.js';

const Status = Type.Object({ status: Type.String() });
const Alive = successResponse('Alive', Status, { status: 'ok' });
const Ready = successResponse('Ready to serve', Status, { status: 'ready' });

// A probe's answer is a constant object, serialized as it is: the first probe after a start then
// does not wait for the schema compilers (src/http/lazy-schemas.ts) to load and compile the
// route's serializer, 100-250 ms on a slow machine. The schemas stay, for the OpenAPI document.
const asIs = (data: unknown) => JSON.stringify(data);
const JSON_TYPE = 'application/json; charset=utf-8';

const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: { operationId: 'checkLiveness', tags: ['health'], security: [], summary: 'The process is alive', response: { 200: Alive } },
  }, async (_request, reply) => reply.type(JSON_TYPE).serializer(asIs).send({ status: 'ok' }));

  app.get('/readyz', {
    schema: { operationId: 'checkReadiness', tags: ['health'], security: [], summary: 'The database is reachable', response: { 200: Ready, ...errorResponses(503) } },
  }, async (request, reply) => {
    try {
      await app.database.ping();
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed');
      throw databaseUnavailable();
    }
    return reply.type(JSON_TYPE).serializer(asIs).send({ status: 'ready' });
  });
};

export default healthRoutes;
