// Webhooks when a run ends (docs/webhooks.md): the account's endpoints, the delivery queue and
// its history, and this process's senders. Registered beside the run workers and, like them,
// idle in an API-only process (WORKER_CONCURRENCY=0) or with WEBHOOK_CONCURRENCY=0; a test
// message (POST /v1/webhooks/{id}/test) is sent by whichever process answers the request.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { instanceView } from '../routes/pipelines/views.js';
import { createDeliveryQueue, type DeliveryQueue } from '../webhooks/deliveries.js';
import { createWebhookDispatcher, type WebhookDispatcher } from '../webhooks/dispatcher.js';
import { createDeliveryHistory, type DeliveryHistory } from '../webhooks/history.js';
import { createHttpSender } from '../webhooks/sender.js';
import { createWebhookStore, type WebhookStore } from '../webhooks/store.js';

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookStore;
    webhookQueue: DeliveryQueue;
    webhookHistory: DeliveryHistory;
    webhookDispatcher: WebhookDispatcher;
  }
}

export interface WebhookPluginOptions {
  /** The time deliveries are scheduled by; default Date.now (tests move it on). */
  clock?: (() => number) | undefined;
}

// A delivery's lease outlasts one attempt by this much, so its holder has stopped before anyone may take it over.
const LEASE_MARGIN_MS = 15_000;

async function webhooksPlugin(app: FastifyInstance, options: WebhookPluginOptions) {
  const { config } = app;
  const clock = options.clock ?? Date.now;
  const allowPrivateEndpoints = config.providers.allowPrivateEndpoints;
  const queue = createDeliveryQueue(app.database, { holder: app.runHolder, leaseMs: config.webhooks.timeoutMs + LEASE_MARGIN_MS });
  const sender = createHttpSender({ timeoutMs: config.webhooks.timeoutMs, allowPrivateEndpoints });
  const background = config.worker.concurrency > 0 ? config.webhooks.concurrency : 0;
  const dispatcher = createWebhookDispatcher({
    queue,
    sender,
    box: app.secretBox,
    // The instance exactly as GET /v1/pipelines/instances/{id} answers it, in the Standard Webhooks envelope.
    render: async (instanceId, eventType) => {
      const row = await app.instances.get(instanceId);
      if (!row?.finishedAt) return null;
      return JSON.stringify({ type: eventType, timestamp: row.finishedAt.toISOString(), data: instanceView(row) });
    },
    concurrency: background,
    pollMs: config.worker.pollMs,
    clock,
    log: app.log.child({ component: 'webhooks' }),
  });
  app.decorate('webhooks', createWebhookStore(app.db, app.secretBox, { allowPrivateEndpoints, clock }));
  app.decorate('webhookQueue', queue);
  app.decorate('webhookHistory', createDeliveryHistory(app.database));
  app.decorate('webhookDispatcher', dispatcher);
  if (background > 0) app.addHook('onReady', async () => dispatcher.start());

  let draining: Promise<void> | null = null;
  const drain = () => (draining ??= dispatcher.drain(config.shutdownTimeoutMs));
  app.addHook('preClose', async () => void drain());
  app.addHook('onClose', async () => {
    await drain();
    await sender.close();
  });
}

export default fp(webhooksPlugin, { name: 'webhooks', fastify: '5.x', dependencies: ['infrastructure', 'ladders', 'worker'] });
