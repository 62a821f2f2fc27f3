// The caller's provider connections (bring your own key).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, OkSchema } from '../../schemas/common.js';
import {
  ConnectionListSchema,
  ConnectionSchema,
  CreateConnectionBodySchema,
  ProviderParamsSchema,
  UpdateConnectionBodySchema,
} from '../../schemas/providers.js';

const tags = ['providers'];

const providerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const connections = app.connections;

  app.get('', {
    schema: { tags, summary: 'List your provider connections, in routing order', response: { 200: ConnectionListSchema, ...errorResponses(401) } },
  }, async (request) => ({ data: await connections.list(request.principal.accountId) }));

  app.post('', {
    schema: {
      tags,
      summary: 'Add a provider connection, or update the existing one for that provider',
      description: 'Answers 201 when created, 200 when an existing connection was updated. Omitted priority: 0 for the first connection, else 10 above your highest (at most 1000).',
      body: CreateConnectionBodySchema,
      response: { 200: ConnectionSchema, 201: ConnectionSchema, ...errorResponses(400, 401) },
    },
  }, async (request, reply) => {
    const { connection, created } = await connections.upsert(request.principal.accountId, request.body);
    return reply.code(created ? 201 : 200).send(connection);
  });

  app.patch('/:provider', {
    schema: {
      tags,
      summary: 'Change fields of a connection; fields left out keep their value',
      params: ProviderParamsSchema,
      body: UpdateConnectionBodySchema,
      response: { 200: ConnectionSchema, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => connections.update(request.principal.accountId, request.params.provider, request.body ?? {}));

  app.delete('/:provider', {
    schema: { tags, summary: 'Remove a connection', params: ProviderParamsSchema, response: { 200: OkSchema, ...errorResponses(401, 404) } },
  }, async (request) => {
    await connections.remove(request.principal.accountId, request.params.provider);
    return { ok: true as const };
  });
};

export default providerRoutes;
