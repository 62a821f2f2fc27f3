import { Type } from '@sinclair/typebox';

export const CatalogEntrySchema = Type.Object({
  id: Type.String({ description: 'Provider id, used as `provider` in connection operations' }),
  label: Type.String(),
  credentialKind: Type.String({ description: 'Kind of credential: `api_key`' }),
  supportsEndpoint: Type.Boolean({ description: 'Whether a connection takes a custom `endpoint` URL' }),
});

export const CatalogSchema = Type.Object({ data: Type.Array(CatalogEntrySchema) });
