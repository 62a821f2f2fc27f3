import { Type } from '@sinclair/typebox';

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

export const ConnectionListSchema = Type.Object({ data: Type.Array(ConnectionSchema) });

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
