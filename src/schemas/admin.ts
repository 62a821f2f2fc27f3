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

export const CreateApiKeyBodySchema = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    access: Type.Optional(LadderAccessSchema),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBodySchema>;

export const ApiKeySchema = Type.Object({
  id: Uuid,
  key_prefix: Type.String({ description: 'The public part of the key, for recognising it' }),
  name: Type.Union([Type.String(), Type.Null()]),
  access: LadderAccessSchema,
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
