// An endpoint's deliveries and their attempts, and the test message: sent at once by the
// process answering, recorded and retried like any other delivery.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { invalidCursor, invalidRequest, webhookNotFound } from '../../errors.js';
import { errorResponses, successResponse } from '../../schemas/common.js';
import * as ex from '../../schemas/webhook-examples.js';
import { DeliveryListQuerySchema, DeliveryListSchema, DeliverySchema, WebhookParamsSchema, type DeliveryList } from '../../schemas/webhooks.js';
import { deliveryView } from './views.js';

const tags = ['webhooks'];
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const TEST_EVENT = 'webhook.test';

function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = /^\d{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw invalidRequest('invalid_value', `limit must be an integer from 1 to ${MAX_LIMIT}.`, 'limit');
  return limit;
}

const deliveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/:id/deliveries', {
    schema: {
      operationId: 'listWebhookDeliveries',
      tags,
      summary: "An endpoint's deliveries, newest first, with every attempt",
      description: 'Cursor pagination: pass `next_cursor` as `after` while `has_more` is true.',
      params: WebhookParamsSchema,
      querystring: DeliveryListQuerySchema,
      response: {
        200: successResponse('A page of deliveries', DeliveryListSchema, { object: 'list', data: [ex.deliveryExample], has_more: false, next_cursor: null }),
        ...errorResponses(403, 400, 401, 404),
      },
    },
  }, async (request): Promise<DeliveryList> => {
    const endpoint = await app.webhooks.get(request.principal.accountId, request.params.id);
    if (!endpoint) throw webhookNotFound(request.params.id);
    const limit = parseLimit(request.query.limit);
    const { after } = request.query;
    // A cursor is a delivery id of this endpoint, as `next_cursor` gave it.
    if (after !== undefined && !(UUID_RE.test(after) && (await app.webhookHistory.exists(endpoint.id, after)))) throw invalidCursor();
    const { rows, hasMore } = await app.webhookHistory.page(endpoint.id, limit, after ?? null);
    return { object: 'list', data: rows.map(deliveryView), has_more: hasMore, next_cursor: hasMore ? (rows.at(-1)?.id ?? null) : null };
  });

  app.post('/:id/test', {
    schema: {
      operationId: 'testWebhook',
      tags,
      summary: 'Send a test message now',
      description:
        'A `webhook.test` message, signed like every other, is sent at once; the answer is its delivery after that first attempt. ' +
        'If it failed, it is retried like any delivery. A disabled endpoint can be tested too (it stays disabled).',
      params: WebhookParamsSchema,
      response: { 200: successResponse('The delivery after its first attempt', DeliverySchema, ex.deliveryExample), ...errorResponses(403, 401, 404) },
    },
  }, async (request) => {
    const endpoint = await app.webhooks.get(request.principal.accountId, request.params.id);
    if (!endpoint) throw webhookNotFound(request.params.id);
    const payload = JSON.stringify({
      type: TEST_EVENT,
      timestamp: new Date().toISOString(),
      data: { webhook_id: endpoint.id, message: 'A test message, sent by POST /v1/webhooks/{id}/test.' },
    });
    const held = await app.webhookQueue.insertHeld(endpoint.id, TEST_EVENT, payload);
    if (!held) throw webhookNotFound(request.params.id);
    await app.webhookDispatcher.deliver(held);
    const record = await app.webhookHistory.get(held.id);
    if (!record) throw webhookNotFound(request.params.id); // deleted while the message was on its way
    return deliveryView(record);
  });
};

export default deliveryRoutes;
