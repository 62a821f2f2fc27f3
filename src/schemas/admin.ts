import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Timestamp, Username, Uuid } from './common.js';
import { LimitsSchema } from './quotas.js';

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
