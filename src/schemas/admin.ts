import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Timestamp, Username, Uuid } from './common.js';
import { LimitsSchema } from './quotas.js';
import { ConnectionSchema } from './providers.js';

export const CreateAccountBodySchema = Type.Object({ username: Username }, { additionalProperties: false });

export const AccountSchema = Type.Object({ id: Uuid, username: Type.String(), created_at: Timestamp });

export const LadderAccessSchema = Type.Object(
  {
    mode: StringEnum(['unrestricted', 'whitelist', 'blacklist']),
    ladders: Type.Array(Type.String({ description: '`author/slug`, or `author/*` for all of an author’s ladders' }), {
      default: [],
      maxItems: 1000,
    }),
  },
  { additionalProperties: false },
);

export const ApiKeyScopeSchema = StringEnum(['use', 'manage'], {
  description: '`use`: the API as today (chat, ladders, runs, provider connections); `manage`: also the account’s keys, webhooks and settings',
});

export const ExpiresAt = Type.Union([Type.String({ description: 'ISO 8601 date-time with a time zone, in the future' }), Type.Null()], {
  description: 'When the key stops working (401 expired_api_key); null: never',
});

export const CreateApiKeyBodySchema = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    scope: Type.Optional({ ...ApiKeyScopeSchema, default: 'use' }),
    access: Type.Optional(LadderAccessSchema),
    expires_at: Type.Optional(ExpiresAt),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBodySchema>;

export const ApiKeySchema = Type.Object({
  id: Uuid,
  key_prefix: Type.String({ description: 'The public part of the key, for recognising it' }),
  name: Type.Union([Type.String(), Type.Null()]),
  scope: ApiKeyScopeSchema,
  access: LadderAccessSchema,
  expires_at: Type.Union([Timestamp, Type.Null()], { description: 'When the key stops working; null: never' }),
  created_at: Timestamp,
  revoked_at: Type.Union([Timestamp, Type.Null()]),
});

export const CreatedApiKeySchema = Type.Composite([
  Type.Omit(ApiKeySchema, ['revoked_at']),
  Type.Object({ key: Type.String({ description: 'The full key. Shown only in this response.' }) }),
]);

export const ApiKeyListSchema = Type.Object({
  data: Type.Array(Type.Composite([ApiKeySchema, Type.Object({ limits: LimitsSchema })])),
});

// ---- What ladder-admin needs when a running server holds the embedded database (issue 18) ----

export const InstanceStatusSchema = StringEnum(['pending', 'running', 'completed', 'failed', 'cancelled']);

/** A run as an operator sees it; `ladder-admin list-instances --json` prints the same rows. */
export const AdminInstanceSummarySchema = Type.Object({
  id: Uuid,
  status: InstanceStatusSchema,
  ladder: Type.String({ description: '`author/slug@vN`: the ladder and the version that ran' }),
  model: Type.String(),
  mode: StringEnum(['sync', 'async']),
  created_at: Timestamp,
  started_at: Type.Union([Timestamp, Type.Null()]),
  finished_at: Type.Union([Timestamp, Type.Null()]),
  spend_usd: Type.Number(),
  model_calls: Type.Integer(),
});

const Usage = Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() });

export const AdminInstanceSchema = Type.Composite([
  AdminInstanceSummarySchema,
  Type.Object({
    usage: Type.Union([Usage, Type.Null()]),
    knobs: Type.Record(Type.String(), Type.Number()),
    answer: Type.Union([Type.String(), Type.Null()]),
    error: Type.Union([
      Type.Object({ status: Type.Integer(), type: Type.String(), code: Type.String(), message: Type.String() }, { additionalProperties: true }),
      Type.Null(),
    ]),
  }),
]);

export const AdminInstanceListSchema = Type.Object({ data: Type.Array(AdminInstanceSummarySchema) });

export const AdminInstanceQuerySchema = Type.Object(
  {
    account: Type.Optional(Username),
    ladder: Type.Optional(Type.String({ pattern: '^[^/]+/[^/]+$', description: '`author/slug`: runs of that ladder, whoever made them' })),
    status: Type.Optional(InstanceStatusSchema),
    limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]{0,2}|1000)$', description: 'An integer from 1 to 1000; default 50' })),
  },
  { additionalProperties: false },
);

export const AdminSetConnectionBodySchema = Type.Object(
  {
    api_key: Type.String({ minLength: 1, maxLength: 8192, description: 'Write-only; never returned' }),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    label: Type.Optional(Type.String({ maxLength: 64 })),
    endpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
);

export const ReencryptResultSchema = Type.Object({
  reencrypted: Type.Integer({ description: 'Stored provider keys resealed under the current encryption key' }),
  total: Type.Integer(),
});

export const AdminConnectionSetSchema = Type.Composite([ConnectionSchema, Type.Object({ created: Type.Boolean({ description: 'true: created; false: an existing connection was updated' }) })]);
