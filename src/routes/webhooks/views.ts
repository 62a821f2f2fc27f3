// Endpoints and deliveries as the API shows them. The signing secret is never part of a view;
// only the create and rotate answers add it.
import type { Delivery, Webhook } from '../../schemas/webhooks.js';
import type { DeliveryRecord } from '../../webhooks/history.js';
import type { EndpointRow } from '../../webhooks/store.js';

const iso = (date: Date | string | null) => (date === null ? null : new Date(date).toISOString());

export function webhookView(row: EndpointRow): Webhook {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.disabledAt === null,
    disabled_at: iso(row.disabledAt),
    disabled_reason: row.disabledReason,
    failing_since: iso(row.failingSince),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function deliveryView(row: DeliveryRecord): Delivery {
  return {
    id: row.id,
    object: 'webhook.delivery',
    webhook_id: row.endpointId,
    event_type: row.eventType,
    instance_id: row.instanceId,
    status: row.status,
    next_attempt_at: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    created_at: new Date(row.createdAt).toISOString(),
    finished_at: iso(row.finishedAt),
    attempts: row.attempts.map((a) => ({ ...a, started_at: new Date(a.started_at).toISOString() })),
  };
}
