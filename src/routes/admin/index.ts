// The admin API, for operators and the dashboard backend. Every route needs ADMIN_TOKEN.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { createAccount, deleteAccount, findAccount } from '../../services/accounts.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../services/api-keys.js';
import { ADMIN_ACTOR } from '../../services/audit.js';
import {
  AccountSchema,
  ApiKeyListSchema,
  CreateAccountBodySchema,
  CreateApiKeyBodySchema,
  CreatedApiKeySchema,
} from '../../schemas/admin.js';
import { errorResponses, OkSchema, Username, Uuid, successResponse, withExamples } from '../../schemas/common.js';
import adminAccountRoutes from './accounts.js';
import adminAuditRoutes from './audit.js';
import adminConnectionRoutes from './connections.js';
import adminInstanceRoutes from './instances.js';
import adminLadderRoutes from './ladders.js';
import adminLimitRoutes from './limits.js';
import * as ex from '../../schemas/examples.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];

const adminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.requireAdminToken);

  app.post('/accounts', {
    schema: {
      operationId: 'createAccount', tags, security, summary: 'Create an account',
      body: withExamples(CreateAccountBodySchema, ex.createAccountExample),
      response: { 201: successResponse('The account was created', AccountSchema, ex.accountExample), ...errorResponses(400, 401, 404, 409) },
    },
  }, async (request, reply) => reply.code(201).send(await createAccount(app.db, request.body.username, ADMIN_ACTOR)));

  app.delete('/accounts/:username', {
    schema: {
      operationId: 'deleteAccount', tags, security, summary: 'Delete an account with its keys, provider connections, ladders and runs',
      params: Type.Object({ username: Username }),
      response: { 200: successResponse('The account is deleted', OkSchema, { ok: true }), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const account = await findAccount(app.db, request.params.username);
    await deleteAccount(app.db, request.params.username, ADMIN_ACTOR);
    // Its keys stop working at once on this node, even before the notice arrives (as a revoked key does).
    app.authenticator.forgetAccount(account.id);
    return { ok: true as const };
  });

  app.post('/accounts/:username/api-keys', {
    schema: {
      operationId: 'createApiKey', tags, security, summary: 'Create an API key (the full key is returned only here)',
      params: Type.Object({ username: Username }),
      body: withExamples(CreateApiKeyBodySchema, ex.createApiKeyExample),
      response: { 201: successResponse('The key was created; `key` is shown only in this answer', CreatedApiKeySchema, ex.createdApiKeyExample), ...errorResponses(400, 401, 404) },
    },
  }, async (request, reply) => {
    const account = await findAccount(app.db, request.params.username);
    const { revoked_at: _, ...created } = await createApiKey(app.db, account, request.body ?? {}, ADMIN_ACTOR);
    return reply.code(201).send(created);
  });

  app.get('/accounts/:username/api-keys', {
    schema: {
      operationId: 'listApiKeys', tags, security, summary: 'List an account’s API keys (never the keys themselves)',
      params: Type.Object({ username: Username }),
      response: { 200: successResponse('The account’s keys, revoked ones included, with their limits', ApiKeyListSchema, ex.apiKeyListExample), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const keys = await listApiKeys(app.db, (await findAccount(app.db, request.params.username)).id);
    const limits = await app.limitsStore.many('api_key', keys.map((k) => k.id)); // quotas: limits in the listing
    return { data: keys.map((k) => ({ ...k, limits: limits.get(k.id)! })) };
  });

  app.delete('/api-keys/:id', {
    schema: {
      operationId: 'revokeApiKey', tags, security, summary: 'Revoke an API key; it stops working at once on every node',
      params: Type.Object({ id: Uuid }),
      response: { 200: successResponse('The key is revoked', OkSchema, { ok: true }), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const { key_prefix: keyPrefix } = await revokeApiKey(app.db, request.params.id, ADMIN_ACTOR);
    app.authenticator.forget(keyPrefix); // this node at once, even before the notice arrives
    return { ok: true as const };
  });

  await app.register(adminLimitRoutes); // quotas: limits and usage of accounts and keys
  await app.register(adminAccountRoutes); // accounts: list, detail, disable and enable (docs/accounts.md)
  await app.register(adminAuditRoutes); // the audit log of every administrative change
  // What ladder-admin needs when this server holds the embedded database.
  await app.register(adminLadderRoutes);
  await app.register(adminInstanceRoutes);
  await app.register(adminConnectionRoutes);
};

export default adminRoutes;
