// /v1/api-keys: the caller's account's own keys, for `manage` keys (docs/accounts.md). A key of
// another account does not exist here (404); a key never grants more than its caller holds.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CreateApiKeyBodySchema, CreatedApiKeySchema } from '../../schemas/admin.js';
import { ApiKeyParamsSchema, ApiKeyWithLimitsSchema, SelfApiKeyListSchema, UpdateApiKeyBodySchema } from '../../schemas/accounts.js';
import { errorResponses, successResponse, UUID_PATTERN, withExamples } from '../../schemas/common.js';
import { apiKeyNotFound } from '../../errors.js';
import { createApiKey, getApiKey, listApiKeys, parseExpiry, revokeApiKey, updateApiKey, type ApiKeyView } from '../../services/api-keys.js';
import { keyActor } from '../../services/audit.js';
import { checkGrant } from '../../services/key-grants.js';
import * as ex from '../../schemas/account-examples.js';

const tags = ['api-keys'];
const UUID_RE = new RegExp(UUID_PATTERN);

const apiKeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const account = (request: { principal: { accountId: string; username: string } }) => ({ id: request.principal.accountId, username: request.principal.username });
  const withLimits = async (keys: ApiKeyView[]) => {
    const limits = await app.limitsStore.many('api_key', keys.map((k) => k.id));
    return keys.map((k) => ({ ...k, limits: limits.get(k.id)! }));
  };
  const ownId = (id: string) => {
    if (!UUID_RE.test(id)) throw apiKeyNotFound(id);
    return id;
  };

  app.post('', {
    schema: {
      operationId: 'createOwnApiKey', tags,
      summary: 'Create a key for your account; the full key is in this answer only',
      description: 'A key cannot grant more than it holds: not the `manage` scope it lacks, no ladder its own access list hides, no expiry later than its own (403).',
      body: withExamples(CreateApiKeyBodySchema, ex.createOwnApiKeyExample),
      response: { 201: successResponse('The key; `key` is shown only here', CreatedApiKeySchema, ex.createdOwnApiKeyExample), ...errorResponses(400, 401, 403) },
    },
  }, async (request, reply) => {
    const body = request.body ?? {};
    const access = body.access ?? { mode: 'unrestricted' as const, ladders: [] };
    checkGrant(request.principal, { scope: body.scope ?? 'use', access, expiresAt: parseExpiry(body.expires_at) });
    const { revoked_at: _, ...created } = await createApiKey(app.db, account(request), body, keyActor(request.principal));
    return reply.code(201).header('location', `/v1/api-keys/${created.id}`).send(created);
  });

  app.get('', {
    schema: {
      operationId: 'listOwnApiKeys', tags, summary: 'Your account’s keys, oldest first, revoked ones included (never the keys themselves)',
      response: { 200: successResponse('Every key of the account, with the limits the operator set', SelfApiKeyListSchema, ex.ownApiKeyListExample), ...errorResponses(401, 403) },
    },
  }, async (request) => ({ object: 'list' as const, data: await withLimits(await listApiKeys(app.db, request.principal.accountId)) }));

  app.get('/:id', {
    schema: {
      operationId: 'getOwnApiKey', tags, summary: 'One of your account’s keys',
      params: ApiKeyParamsSchema,
      response: { 200: successResponse('The key', ApiKeyWithLimitsSchema, ex.ownApiKeyExample), ...errorResponses(401, 403, 404) },
    },
  }, async (request) => (await withLimits([await getApiKey(app.db, request.principal.accountId, ownId(request.params.id))]))[0]!);

  app.patch('/:id', {
    schema: {
      operationId: 'updateOwnApiKey', tags,
      summary: 'Change a key’s name, scope, ladder access or expiry; fields left out keep their value',
      description: 'Takes effect on every node at once. A key cannot grant more than it holds (403); a revoked key cannot be changed (409).',
      params: ApiKeyParamsSchema,
      body: withExamples(UpdateApiKeyBodySchema, ex.updateOwnApiKeyExample),
      response: { 200: successResponse('The key after the change', ApiKeyWithLimitsSchema, ex.ownApiKeyExample), ...errorResponses(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const id = ownId(request.params.id);
    const body = request.body;
    await getApiKey(app.db, request.principal.accountId, id); // another account's key: 404 before any 403
    checkGrant(request.principal, {
      ...(body.scope ? { scope: body.scope } : {}),
      ...(body.access ? { access: body.access } : {}),
      ...(body.expires_at !== undefined ? { expiresAt: parseExpiry(body.expires_at) } : {}),
    });
    const updated = await updateApiKey(app.db, account(request), id, body, keyActor(request.principal));
    app.authenticator.forget(updated.key_prefix); // this node at once, even before the notice arrives
    return (await withLimits([updated]))[0]!;
  });

  app.delete('/:id', {
    schema: {
      operationId: 'revokeOwnApiKey', tags, summary: 'Revoke a key: it stops working on every node at once (a key may revoke itself)',
      params: ApiKeyParamsSchema,
      response: { 200: successResponse('The key, revoked', ApiKeyWithLimitsSchema, ex.revokedOwnApiKeyExample), ...errorResponses(401, 403, 404) },
    },
  }, async (request) => {
    const revoked = await revokeApiKey(app.db, ownId(request.params.id), keyActor(request.principal), request.principal.accountId);
    app.authenticator.forget(revoked.key_prefix);
    return (await withLimits([revoked]))[0]!;
  });
};

export default apiKeyRoutes;
