// The caller's provider connections (bring your own key).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, OkSchema, successResponse, withExamples } from '../../schemas/common.js';
import {
  ConnectionStatusListSchema,
  ConnectionSchema,
  CreateConnectionBodySchema,
  ProviderParamsSchema,
  UpdateConnectionBodySchema,
} from '../../schemas/providers.js';
import * as ex from '../../schemas/examples.js';
import { ApiError } from '../../errors.js';

const tags = ['providers'];

const providerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const connections = app.connections;

  app.get('', {
    schema: {
      operationId: 'listProviders',
      tags,
      summary: 'List your provider connections, in routing order, with their health',
      description: 'Each connection carries its circuit state and last failed attempt as the node answering has seen them (each node keeps its own).',
      response: { 200: successResponse('Your connections, in routing order', ConnectionStatusListSchema, { data: [{ ...ex.connectionExample, circuit_state: 'closed', last_error: null }] }), ...errorResponses(401) },
    },
  }, async (request) => {
    const { accountId } = request.principal;
    // A circuit is named after the key it uses; a key that cannot be decrypted must not hide the
    // list, where its owner goes to replace it (calls through it report the problem loudly).
    const [views, stored] = await Promise.all([
      connections.list(accountId),
      connections.forRouting(accountId).catch((error: unknown) => {
        if (error instanceof ApiError && error.code === 'provider_key_unreadable') return [];
        throw error;
      }),
    ]);
    const byProvider = new Map(stored.map((c) => [c.provider, c]));
    return {
      data: views.map((view) => {
        const connection = byProvider.get(view.provider);
        return { ...view, ...(connection ? app.providerRouter.health(connection) : { circuit_state: 'closed' as const, last_error: null }) };
      }),
    };
  });

  app.post('', {
    schema: {
      operationId: 'addProvider',
      tags,
      summary: 'Add a provider connection, or update the existing one for that provider',
      description: 'Answers 201 when created, 200 when an existing connection was updated. Omitted priority: 0 for the first connection, else 10 above your highest (at most 1000).',
      body: withExamples(CreateConnectionBodySchema, ex.createConnectionExample),
      response: {
        200: successResponse('Your existing connection for that provider was updated', ConnectionSchema, ex.connectionExample),
        201: successResponse('The connection was created', ConnectionSchema, ex.connectionExample),
        ...errorResponses(400, 401) },
    },
  }, async (request, reply) => {
    const { connection, created } = await connections.upsert(request.principal.accountId, request.body);
    return reply.code(created ? 201 : 200).send(connection);
  });

  app.patch('/:provider', {
    schema: {
      operationId: 'updateProvider',
      tags,
      summary: 'Change fields of a connection; fields left out keep their value',
      params: ProviderParamsSchema,
      body: withExamples(UpdateConnectionBodySchema, ex.updateConnectionExample),
      response: { 200: successResponse('The connection as it is now', ConnectionSchema, { ...ex.connectionExample, priority: 20 }), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => connections.update(request.principal.accountId, request.params.provider, request.body ?? {}));

  app.delete('/:provider', {
    schema: { operationId: 'removeProvider', tags, summary: 'Remove a connection', params: ProviderParamsSchema, response: { 200: successResponse('The connection is removed', OkSchema, { ok: true }), ...errorResponses(401, 404) } },
  }, async (request) => {
    await connections.remove(request.principal.accountId, request.params.provider);
    return { ok: true as const };
  });
};

export default providerRoutes;
