// Admin routes for runs, whoever made them: what `ladder-admin list-instances` and
// `show-instance` print, in the same shapes (src/services/admin-instances.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { listInstances, showInstance } from '../../services/admin-instances.js';
import { AdminInstanceListSchema, AdminInstanceQuerySchema, AdminInstanceSchema } from '../../schemas/admin.js';
import { adminInstanceExample, adminInstanceListExample } from '../../schemas/admin-examples.js';
import { errorResponses, successResponse, Uuid } from '../../schemas/common.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];

const adminInstanceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/instances', {
    schema: {
      operationId: 'adminListInstances', tags, security, summary: 'Ladder runs of every account, newest first (50 unless `limit` says otherwise)',
      querystring: AdminInstanceQuerySchema,
      response: { 200: successResponse('The runs', AdminInstanceListSchema, adminInstanceListExample), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const { account, ladder, status, limit } = request.query;
    const [author, slug] = ladder?.split('/') ?? [];
    const filters = { account, status, limit: limit === undefined ? undefined : Number(limit), ladder: author && slug ? { author, slug } : undefined };
    return { data: await listInstances(app.db, filters) };
  });

  app.get('/instances/:id', {
    schema: {
      operationId: 'adminGetInstance', tags, security, summary: 'One run: status, ladder, model, times, spend, usage, answer or error',
      params: Type.Object({ id: Uuid }),
      response: { 200: successResponse('The run', AdminInstanceSchema, adminInstanceExample), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => showInstance(app.db, request.params.id));
};

export default adminInstanceRoutes;
