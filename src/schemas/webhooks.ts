// Webhook endpoints and their deliveries: /v1/webhooks (docs/webhooks.md).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { StringEnum, Timestamp, Uuid } from './common.js';
import { InstanceSchema } from './pipelines.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const WEBHOOK_EVENT_TYPES = ['instance.completed', 'instance.failed', 'instance.cancelled'] as const;
export const MAX_DESCRIPTION_CHARS = 256;

const EventTypesSchema = Type.Array(StringEnum(WEBHOOK_EVENT_TYPES), {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The events sent to this endpoint; default all three',
});
const UrlSchema = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Where events are POSTed: an https URL whose host resolves only to public addresses (checked at save and at every connection)',
});
const DescriptionSchema = Type.String({ maxLength: MAX_DESCRIPTION_CHARS, description: 'Your note on the endpoint' });

export const CreateWebhookBodySchema = Type.Object(
  { url: UrlSchema, events: Type.Optional(EventTypesSchema), description: Type.Optional(DescriptionSchema) },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBodySchema>;

export const UpdateWebhookBodySchema = Type.Object(
  {
    url: Type.Optional(UrlSchema),
    events: Type.Optional(EventTypesSchema),
    description: Type.Optional(DescriptionSchema),
    enabled: Type.Optional(Type.Boolean({ description: '`true` enables a disabled endpoint again (its failure streak starts over); `false` disables it' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBodySchema>;

// No format on the id: a malformed one gets the same 404 as an unknown one.
export const WebhookParamsSchema = Type.Object({ id: Type.String({ description: 'Webhook endpoint id (a UUID)' }) });

export const WebhookSchema = Type.Object({
  id: Uuid,
  object: Type.Literal('webhook_endpoint'),
  url: Type.String(),
  description: Type.String(),
  events: Type.Array(StringEnum(WEBHOOK_EVENT_TYPES)),
  enabled: Type.Boolean({ description: 'False once disabled (by you, or after 3 days of failures); a disabled endpoint is sent nothing' }),
  disabled_at: Nullable(Timestamp),
  disabled_reason: Nullable(Type.String({ description: 'Why the endpoint is disabled' })),
  failing_since: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Webhook = Static<typeof WebhookSchema>;

export const WebhookWithSecretSchema = Type.Object(
  {
    ...WebhookSchema.properties,
    secret: Type.String({ description: 'The signing secret (`whsec_...`). Shown only in this answer: keep it.' }),
  },
  { description: 'The endpoint and its signing secret' },
);
export type WebhookWithSecret = Static<typeof WebhookWithSecretSchema>;

export const WebhookListSchema = Type.Object({ object: Type.Literal('list'), data: Type.Array(WebhookSchema) });

export const AttemptSchema = Type.Object({
  attempt: Type.Integer({ description: '1 for the first' }),
  started_at: Timestamp,
  status_code: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when none came (timeout, connection refused, SSRF refusal)" })),
  latency_ms: Type.Integer(),
  error: Nullable(Type.String({ description: 'Why the attempt failed; null when it succeeded' })),
});

export const DeliverySchema = Type.Object({
  id: Uuid,
  object: Type.Literal('webhook.delivery'),
  webhook_id: Uuid,
  event_type: Type.String({ description: 'An instance event, or `webhook.test`' }),
  instance_id: Nullable(Uuid),
  status: StringEnum(['pending', 'sending', 'delivered', 'failed'], {
    description: '`pending`: waiting for its next attempt; `sending`: an attempt is under way; `delivered`; `failed`: given up',
  }),
  next_attempt_at: Nullable(Timestamp),
  created_at: Timestamp,
  finished_at: Nullable(Timestamp),
  attempts: Type.Array(AttemptSchema, { description: 'Oldest first' }),
});
export type Delivery = Static<typeof DeliverySchema>;

export const DeliveryListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(DeliverySchema),
  has_more: Type.Boolean(),
  next_cursor: Nullable(Type.String({ description: 'Pass as `after` for the next page; null on the last' })),
});
export type DeliveryList = Static<typeof DeliveryListSchema>;

export const DeliveryListQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.String({ description: 'An integer from 1 to 100; default 20' })),
    after: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page' })),
  },
  { additionalProperties: false },
);

export const WebhookMessageSchema = Type.Object(
  {
    type: StringEnum([...WEBHOOK_EVENT_TYPES, 'webhook.test']),
    timestamp: Timestamp,
    data: Type.Union([InstanceSchema, Type.Object({ webhook_id: Uuid, message: Type.String() })]),
  },
  { description: 'The body of every message: the instance as GET /v1/pipelines/instances/{id} answers it, once it has ended' },
);
export type WebhookMessage = Static<typeof WebhookMessageSchema>;
