import { Type } from '@sinclair/typebox';
import { StringEnum } from './common.js';

export const CatalogEntrySchema = Type.Object({
  id: Type.String({ description: 'Provider id, used as `provider` in connection operations' }),
  label: Type.String(),
  credentialKind: Type.String({ description: 'Kind of credential: `api_key`' }),
  supportsEndpoint: Type.Boolean({ description: 'Whether a connection takes a custom `endpoint` URL' }),
});

export const CatalogSchema = Type.Object({ data: Type.Array(CatalogEntrySchema) });

const ProviderId = Type.String({ minLength: 1, maxLength: 64, description: 'A provider id from the catalog' });
const Priority = Type.Integer({ minimum: 0, maximum: 1000, description: 'Lower is tried first' });
const Label = Type.String({ maxLength: 64 });
const ApiKeyField = Type.String({ minLength: 1, maxLength: 8192, description: 'Write-only; never returned' });
const Endpoint = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Base URL, only for providers with supportsEndpoint (required for them)',
});

export const ConnectionSchema = Type.Object({
  provider: Type.String(),
  label: Type.String(),
  priority: Type.Integer(),
  key_prefix: Type.String({ description: 'A short leading part of the key; the rest is never shown' }),
  endpoint: Type.Union([Type.String(), Type.Null()]),
  updated_at: Type.String({ format: 'date-time' }),
});

export const LastErrorSchema = Type.Object(
  {
    reason: Type.String({ description: 'What went wrong: `auth_failed`, `rate_limited`, `server_error`, `timeout`, `connection_error`, …' }),
    status: Type.Union([Type.Integer(), Type.Null()], { description: "The vendor's HTTP status; null when no answer arrived" }),
    at: Type.String({ format: 'date-time' }),
  },
  { description: "The connection's last failed attempt on the node that answered, since that node started; the vendor's message is never kept" },
);

export const ConnectionStatusSchema = Type.Composite([
  ConnectionSchema,
  Type.Object({
    circuit_state: StringEnum(['closed', 'open', 'half-open'], {
      description: 'The circuit breaker on the node that answered: `open` skips the connection for a while after consecutive failures, `half-open` lets one trial call through',
    }),
    last_error: Type.Union([LastErrorSchema, Type.Null()]),
  }),
]);

export const ConnectionListSchema = Type.Object({ data: Type.Array(ConnectionSchema) });
export const ConnectionStatusListSchema = Type.Object({ data: Type.Array(ConnectionStatusSchema) });

export const CreateConnectionBodySchema = Type.Object(
  {
    provider: ProviderId,
    api_key: ApiKeyField,
    priority: Type.Optional(Priority),
    label: Type.Optional(Label),
    endpoint: Type.Optional(Endpoint),
  },
  { additionalProperties: false },
);

export const UpdateConnectionBodySchema = Type.Object(
  {
    api_key: Type.Optional(ApiKeyField),
    priority: Type.Optional(Priority),
    label: Type.Optional(Label),
    endpoint: Type.Optional(Endpoint),
  },
  { additionalProperties: false },
);

export const ProviderParamsSchema = Type.Object({ provider: ProviderId });
