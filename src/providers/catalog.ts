// Placeholder: the provider-engine work replaces this file with the full catalog.
export interface CatalogEntry {
  id: string;
  label: string;
  credentialKind: 'api_key';
  supportsEndpoint: boolean;
}

export const providerCatalog: readonly CatalogEntry[] = [
  { id: 'openai', label: 'OpenAI', credentialKind: 'api_key', supportsEndpoint: false },
];
