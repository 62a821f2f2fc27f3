import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { databaseUnavailable } from '../../errors.js';
import { errorResponses, successResponse } from '../../schemas/common.js';

const Status = Type.Object({ status: Type.String() });
const Alive = successResponse('Alive', Status, { status: 'ok' });
const Ready = successResponse('Ready to serve', Status, { status: 'ready' });

const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: { operationId: 'checkLiveness', tags: ['health'], security: [], summary: 'The process is alive', response: { 200: Alive } },
  }, async () => ({ status: 'ok' }));

  app.get('/readyz', {
    schema: { operationId: 'checkReadiness', tags: ['health'], security: [], summary: 'The database is reachable', response: { 200: Ready, ...errorResponses(503) } },
  }, async (request) => {
    try {
      await app.database.ping();
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed');
      throw databaseUnavailable();
    }
    return { status: 'ready' };
  });
};

export default healthRoutes;
