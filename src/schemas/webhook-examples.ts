// Examples for the /v1/webhooks routes in the OpenAPI document (checked against the schemas by test/plugins/openapi.test.ts).
import type { CreateWebhookBody, Delivery, Webhook, WebhookWithSecret } from './webhooks.js';

export const createWebhookExample: CreateWebhookBody = {
  url: 'https://example.com/hooks/ladder',
  events: ['instance.completed', 'instance.failed'],
  description: 'Tell the billing service when a run ends',
};

export const webhookExample: Webhook = {
  id: '3f0b8a52-7c1e-4f7a-9a57-2f1c6f0e9d41',
  object: 'webhook_endpoint',
  url: 'https://example.com/hooks/ladder',
  description: 'Tell the billing service when a run ends',
  events: ['instance.completed', 'instance.failed'],
  enabled: true,
  disabled_at: null,
  disabled_reason: null,
  failing_since: null,
  created_at: '2025-06-01T12:00:00.000Z',
  updated_at: '2025-06-01T12:00:00.000Z',
};

export const webhookWithSecretExample: WebhookWithSecret = { ...webhookExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };

export const deliveryExample: Delivery = {
  id: '0d7f4c1e-2b7a-4d55-8f0e-6a1b2c3d4e5f',
  object: 'webhook.delivery',
  webhook_id: webhookExample.id,
  event_type: 'instance.completed',
  instance_id: '9b2e7c4a-1f3d-4e8b-a6c5-0d1e2f3a4b5c',
  status: 'delivered',
  next_attempt_at: null,
  created_at: '2025-06-01T12:05:00.000Z',
  finished_at: '2025-06-01T12:05:05.300Z',
  attempts: [
    { attempt: 1, started_at: '2025-06-01T12:05:00.020Z', status_code: 503, latency_ms: 41, error: 'The receiver answered 503.' },
    { attempt: 2, started_at: '2025-06-01T12:05:05.210Z', status_code: 200, latency_ms: 38, error: null },
  ],
};
