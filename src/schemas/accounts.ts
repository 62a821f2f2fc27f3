// The account as its holder sees it (GET /v1/account), the self-service keys (/v1/api-keys),
// and the operator's account list, account detail and audit log (docs/accounts.md).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ApiKeySchema, ApiKeyScopeSchema, ExpiresAt, LadderAccessSchema } from './admin.js';
import { StringEnum, Timestamp, Uuid } from './common.js';
import { LimitsSchema } from './quotas.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const NextCursor = Nullable(Type.String({ description: 'Pass as `after` for the next page; null on the last' }));
const Limit = Type.Optional(Type.String({ description: 'An integer from 1 to 100; default 20' }));
const After = Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page' }));

export const MonthUsageSchema = Type.Object(
  {
    start: Timestamp,
    requests: Type.Integer(),
    total_tokens: Type.Integer(),
    cost_usd: Type.Number({ description: 'USD, exact to the nano-dollar' }),
  },
  { description: 'Model calls, tokens and spend since the start of the current UTC month (the usage ledger)' },
);

export const ApiKeyWithLimitsSchema = Type.Composite([ApiKeySchema, Type.Object({ limits: LimitsSchema })]);

export const MyAccountSchema = Type.Object({
  id: Uuid,
  username: Type.String(),
  created_at: Timestamp,
  limits: Type.Object({ account: LimitsSchema, key: LimitsSchema }, { description: 'Set by the operator; null: unlimited' }),
  this_month: MonthUsageSchema,
  key: Type.Omit(ApiKeySchema, ['revoked_at'], { description: 'The key this request was made with' }),
});

export const SelfApiKeyListSchema = Type.Object({ object: Type.Literal('list'), data: Type.Array(ApiKeyWithLimitsSchema) });

export const UpdateApiKeyBodySchema = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    scope: Type.Optional(ApiKeyScopeSchema),
    access: Type.Optional(LadderAccessSchema),
    expires_at: Type.Optional(ExpiresAt),
  },
  { additionalProperties: false, description: 'Only the fields given change' },
);
export type UpdateApiKeyBody = Static<typeof UpdateApiKeyBodySchema>;

// No format on the id: a malformed one gets the same 404 as an unknown one.
export const ApiKeyParamsSchema = Type.Object({ id: Type.String({ description: 'API key id (a UUID)' }) });

export const AdminAccountSchema = Type.Object({
  id: Uuid,
  username: Type.String(),
  created_at: Timestamp,
  disabled: Type.Boolean(),
  disabled_at: Nullable(Timestamp),
  key_count: Type.Integer({ description: 'Keys that work: neither revoked nor expired' }),
});

export const AccountListQuerySchema = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 39, description: 'Only usernames containing this text' })),
    limit: Limit,
    after: After,
  },
  { additionalProperties: false },
);

export const AccountListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(AdminAccountSchema),
  has_more: Type.Boolean(),
  next_cursor: NextCursor,
});

export const AccountDetailSchema = Type.Composite([AdminAccountSchema, Type.Object({ limits: LimitsSchema, this_month: MonthUsageSchema })]);

export const AccountStatusSchema = Type.Composite([
  AdminAccountSchema,
  Type.Object({
    runs_cancelled: Type.Integer({ description: 'Runs in flight cancelled by this request (queued ones at once, running ones within about a second)' }),
  }),
]);

export const AUDIT_ACTIONS = [
  'account.created', 'account.deleted', 'account.disabled', 'account.enabled', 'account.limits_set',
  'api_key.created', 'api_key.updated', 'api_key.revoked', 'api_key.limits_set',
  'webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.secret_rotated',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AuditEntrySchema = Type.Object({
  id: Type.String(),
  created_at: Timestamp,
  actor: Type.Object({
    type: StringEnum(['admin', 'cli', 'api_key'], { description: '`admin`: ADMIN_TOKEN; `cli`: the ladder-admin command line; `api_key`: a key of the account' }),
    api_key_id: Nullable(Uuid),
  }),
  account: Nullable(Type.Object({ id: Uuid, username: Type.String() })),
  action: StringEnum(AUDIT_ACTIONS),
  target_id: Nullable(Type.String({ description: 'The account, key or webhook endpoint changed' })),
  details: Type.Record(Type.String(), Type.Unknown(), { description: 'What changed; never a key or a secret' }),
});

export const AuditQuerySchema = Type.Object(
  {
    account: Type.Optional(Type.String({ maxLength: 39, description: 'Only changes to this account (by username)' })),
    action: Type.Optional(StringEnum(AUDIT_ACTIONS)),
    limit: Limit,
    after: After,
  },
  { additionalProperties: false },
);

export const AuditListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(AuditEntrySchema),
  has_more: Type.Boolean(),
  next_cursor: NextCursor,
});
