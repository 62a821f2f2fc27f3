// Admin routes for an account's provider connections and for resealing stored keys: what
// `ladder-admin list-connections`, `set-connection`, `delete-connection` and `reencrypt` do.
// They use this server's connection service, so endpoints get the very rule of POST /v1/providers.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { findAccount } from '../../services/accounts.js';
import { AdminConnectionSetSchema, AdminSetConnectionBodySchema, ReencryptResultSchema } from '../../schemas/admin.js';
import { adminConnectionSetExample, adminSetConnectionExample, connectionListExample, reencryptResultExample } from '../../schemas/admin-examples.js';
import { errorResponses, OkSchema, successResponse, Username, withExamples } from '../../schemas/common.js';
import { ConnectionListSchema, ProviderParamsSchema } from '../../schemas/providers.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const AccountParams = Type.Object({ username: Username });
const ConnectionParams = Type.Composite([AccountParams, ProviderParamsSchema]);

const adminConnectionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const accountId = async (username: string) => (await findAccount(app.db, username)).id;

  app.get('/accounts/:username/providers', {
    schema: {
      operationId: 'adminListConnections', tags, security, summary: 'An account’s provider connections in priority order (never the keys)',
      params: AccountParams,
      response: { 200: successResponse('The connections', ConnectionListSchema, connectionListExample), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => ({ data: await app.connections.list(await accountId(request.params.username)) }));

  app.put('/accounts/:username/providers/:provider', {
    schema: {
      operationId: 'adminSetConnection', tags, security, summary: 'Create or update an account’s connection to a provider',
      description: 'As `POST /v1/providers` by the account: the same endpoint rule (ALLOW_PRIVATE_ENDPOINTS). 201 when created, 200 when updated.',
      params: ConnectionParams,
      body: withExamples(AdminSetConnectionBodySchema, adminSetConnectionExample),
      response: {
        200: successResponse('The connection was updated', AdminConnectionSetSchema, { ...adminConnectionSetExample, created: false }),
        201: successResponse('The connection was created', AdminConnectionSetSchema, adminConnectionSetExample),
        ...errorResponses(400, 401, 404),
      },
    },
  }, async (request, reply) => {
    const { connection, created } = await app.connections.upsert(await accountId(request.params.username), { provider: request.params.provider, ...request.body });
    return reply.code(created ? 201 : 200).send({ ...connection, created });
  });

  app.delete('/accounts/:username/providers/:provider', {
    schema: {
      operationId: 'adminDeleteConnection', tags, security, summary: 'Delete an account’s connection to a provider',
      params: ConnectionParams,
      response: { 200: successResponse('The connection is deleted', OkSchema, { ok: true }), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    await app.connections.remove(await accountId(request.params.username), request.params.provider);
    return { ok: true as const };
  });

  app.post('/reencrypt', {
    schema: {
      operationId: 'reencryptProviderKeys', tags, security, summary: 'Reseal every stored provider key under the current encryption key',
      description: 'After a key rotation (README, "Rotating the encryption key"). A key no configured encryption key opens is 500 provider_key_unreadable, naming it.',
      response: { 200: successResponse('How many keys were resealed', ReencryptResultSchema, reencryptResultExample), ...errorResponses(401, 500) },
    },
  }, async () => app.connections.reencryptAll());
};

export default adminConnectionRoutes;
