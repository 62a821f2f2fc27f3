// /v1/webhooks: the account's endpoints, told when its runs end (docs/webhooks.md). Only the
// owner account sees an endpoint; for anyone else it does not exist.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { webhookNotFound } from '../../errors.js';
import { errorResponses, OkSchema, successResponse, withExamples } from '../../schemas/common.js';
import * as ex from '../../schemas/webhook-examples.js';
import {
  CreateWebhookBodySchema, UpdateWebhookBodySchema, WEBHOOK_EVENT_TYPES, WebhookListSchema, WebhookParamsSchema, WebhookSchema,
  WebhookWithSecretSchema,
} from '../../schemas/webhooks.js';
import { keyActor, recordAudit } from '../../services/audit.js';
import type { Principal } from '../../services/authenticator.js';
import type { AuditAction } from '../../schemas/accounts.js';
import { webhookView } from './views.js';

const tags = ['webhooks'];

const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const store = app.webhooks;
  // Every change is audited with the key that made it (docs/accounts.md); never the secret, nor
  // a URL's path or query, which may carry a token: its host only.
  const audit = (request: { principal: Principal }, action: AuditAction, id: string, details: Record<string, unknown> = {}) =>
    recordAudit(app.db, keyActor(request.principal), { action, account: { id: request.principal.accountId, username: request.principal.username }, targetId: id, details });

  app.post('', {
    schema: {
      operationId: 'createWebhook',
      tags,
      summary: 'Register an endpoint to be told when runs end',
      description: 'The answer carries the signing secret (`whsec_...`); it is shown only here and when rotated.',
      body: withExamples(CreateWebhookBodySchema, ex.createWebhookExample),
      response: { 201: successResponse('The endpoint, with its signing secret', WebhookWithSecretSchema, ex.webhookWithSecretExample), ...errorResponses(403, 400, 401) },
    },
  }, async (request, reply) => {
    const { url, events, description } = request.body;
    const { endpoint, secret } = await store.create(request.principal.accountId, { url, events: events ?? [...WEBHOOK_EVENT_TYPES], description: description ?? '' });
    await audit(request, 'webhook.created', endpoint.id, { host: new URL(endpoint.url).host, events: endpoint.events });
    return reply.code(201).header('location', `/v1/webhooks/${endpoint.id}`).send({ ...webhookView(endpoint), secret });
  });

  app.get('', {
    schema: {
      operationId: 'listWebhooks',
      tags,
      summary: "The account's endpoints, oldest first",
      response: { 200: successResponse('Every endpoint of the account', WebhookListSchema, { object: 'list', data: [ex.webhookExample] }), ...errorResponses(403, 401) },
    },
  }, async (request) => ({ object: 'list' as const, data: (await store.list(request.principal.accountId)).map(webhookView) }));

  app.get('/:id', {
    schema: {
      operationId: 'getWebhook',
      tags,
      summary: 'An endpoint: where, which events, and whether it is enabled',
      params: WebhookParamsSchema,
      response: { 200: successResponse('The endpoint', WebhookSchema, ex.webhookExample), ...errorResponses(403, 401, 404) },
    },
  }, async (request) => {
    const row = await store.get(request.principal.accountId, request.params.id);
    if (!row) throw webhookNotFound(request.params.id);
    return webhookView(row);
  });

  app.patch('/:id', {
    schema: {
      operationId: 'updateWebhook',
      tags,
      summary: 'Change an endpoint; fields left out keep their value',
      description: '`"enabled": true` enables a disabled endpoint again; `false` disables it. A new `url` is checked as on create.',
      params: WebhookParamsSchema,
      body: withExamples(UpdateWebhookBodySchema, { enabled: true }),
      response: { 200: successResponse('The endpoint as it is now', WebhookSchema, ex.webhookExample), ...errorResponses(403, 400, 401, 404) },
    },
  }, async (request) => {
    const row = await store.update(request.principal.accountId, request.params.id, request.body);
    if (!row) throw webhookNotFound(request.params.id);
    const { url: newUrl, ...changes } = request.body;
    await audit(request, 'webhook.updated', row.id, { ...changes, ...(newUrl ? { host: new URL(row.url).host } : {}) });
    return webhookView(row);
  });

  app.delete('/:id', {
    schema: {
      operationId: 'deleteWebhook',
      tags,
      summary: 'Delete an endpoint, its queued deliveries and their history',
      params: WebhookParamsSchema,
      response: { 200: successResponse('The endpoint is deleted', OkSchema, { ok: true }), ...errorResponses(403, 401, 404) },
    },
  }, async (request) => {
    if (!(await store.remove(request.principal.accountId, request.params.id))) throw webhookNotFound(request.params.id);
    await audit(request, 'webhook.deleted', request.params.id);
    return { ok: true as const };
  });

  app.post('/:id/rotate-secret', {
    schema: {
      operationId: 'rotateWebhookSecret',
      tags,
      summary: 'Make a new signing secret',
      description: 'The answer carries the new secret. For 24 hours messages carry a signature by the old secret too, so a receiver can switch over.',
      params: WebhookParamsSchema,
      response: { 200: successResponse('The endpoint, with its new signing secret', WebhookWithSecretSchema, ex.webhookWithSecretExample), ...errorResponses(403, 400, 401, 404) },
    },
  }, async (request) => {
    const rotated = await store.rotateSecret(request.principal.accountId, request.params.id);
    if (!rotated) throw webhookNotFound(request.params.id);
    await audit(request, 'webhook.secret_rotated', rotated.endpoint.id);
    return { ...webhookView(rotated.endpoint), secret: rotated.secret };
  });
};

export default webhookRoutes;
