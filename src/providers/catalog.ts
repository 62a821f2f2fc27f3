// The provider catalog and the model -> candidate connections rule.
import type { ProviderConnection } from './types.js';

/** Which model names a provider serves: a fixed list, a pattern, or any name at all. */
export type ModelMatcher = { kind: 'list'; models: readonly string[] } | { kind: 'pattern'; pattern: RegExp } | { kind: 'any' };

export interface CatalogEntry {
  id: string;
  label: string;
  credentialKind: 'api_key';
  supportsEndpoint: boolean;
  /** Internal: not part of the public catalog response. */
  models: ModelMatcher;
  /** Internal: one line for the docs. */
  modelsServed: string;
  /** Internal: the models it embeds with (POST /v1/embeddings); absent when its API has no embeddings. */
  embeddingModels?: ModelMatcher;
  /** Internal: one line for the docs' embeddings column. */
  embeddingModelsServed?: string;
}

const pattern = (re: RegExp, modelsServed: string) => ({ models: { kind: 'pattern', pattern: re } as const, modelsServed });
const any = (modelsServed: string) => ({ models: { kind: 'any' } as const, modelsServed });

const entry = (id: string, label: string, supportsEndpoint: boolean, models: Pick<CatalogEntry, 'models' | 'modelsServed'>, embeddings?: Pick<CatalogEntry, 'models' | 'modelsServed'>): CatalogEntry => ({
  id,
  label,
  credentialKind: 'api_key',
  supportsEndpoint,
  ...models,
  ...(embeddings ? { embeddingModels: embeddings.models, embeddingModelsServed: embeddings.modelsServed } : {}),
});

export const providerCatalog: readonly CatalogEntry[] = [
  entry('openai', 'OpenAI', false, pattern(/^(gpt-|o[1-9]|chatgpt-)/, 'gpt-*, o1…o9*, chatgpt-*'), pattern(/^text-embedding-/, 'text-embedding-*')),
  entry('anthropic', 'Anthropic', false, pattern(/^claude-/, 'claude-*')),
  entry('google', 'Google Gemini', false, pattern(/^(gemini-|gemma-)/, 'gemini-*, gemma-*'),
    pattern(/^(gemini-embedding-|text-embedding-00\d|embedding-00\d|text-multilingual-embedding-)/, 'gemini-embedding-*, text-embedding-00N, embedding-00N')),
  entry('mistral', 'Mistral AI', false, pattern(
    /^(mistral-|open-mistral|open-mixtral|codestral|ministral-|pixtral-|magistral-|devstral)/,
    'mistral-*, open-mistral*, open-mixtral*, codestral*, ministral-*, pixtral-*, magistral-*, devstral*',
  ), pattern(/^(mistral-embed|codestral-embed)/, 'mistral-embed*, codestral-embed*')),
  entry('groq', 'Groq', false, pattern(
    /^(llama-3|llama3-|meta-llama\/|gemma2-|qwen\/|qwen-|moonshotai\/|openai\/gpt-oss|deepseek-r1-distill|compound)/,
    'llama-3*, llama3-*, meta-llama/*, gemma2-*, qwen/*, qwen-*, moonshotai/*, openai/gpt-oss* (select as groq/openai/…), deepseek-r1-distill*, compound*',
  )),
  entry('deepseek', 'DeepSeek', false, { models: { kind: 'list', models: ['deepseek-chat', 'deepseek-reasoner'] }, modelsServed: 'deepseek-chat, deepseek-reasoner' }),
  entry('xai', 'xAI', false, pattern(/^grok-/, 'grok-*')),
  entry('together', 'Together AI', false, pattern(/^[A-Za-z0-9][\w.-]*\/[\w.:-]+$/, 'any organisation/model name, e.g. meta-llama/Llama-3.3-70B-Instruct-Turbo'),
    pattern(/^[A-Za-z0-9][\w.-]*\/[\w.:-]+$/, 'any organisation/model name, e.g. BAAI/bge-large-en-v1.5')),
  entry('fireworks', 'Fireworks AI', false, pattern(/^accounts\/[\w-]+\/models\//, 'accounts/<account>/models/*'),
    pattern(/^(accounts\/[\w-]+\/models\/|nomic-ai\/)/, 'accounts/<account>/models/*, nomic-ai/*')),
  entry('openrouter', 'OpenRouter', false, any('any model name, sent unchanged'), any('any embedding model name, sent unchanged')),
  entry('cerebras', 'Cerebras', false, pattern(/^(llama3\.1-|llama-3\.3-|llama-4-|qwen-3-|gpt-oss-)/, 'llama3.1-*, llama-3.3-*, llama-4-*, qwen-3-*, gpt-oss-*')),
  entry('perplexity', 'Perplexity', false, pattern(/^(sonar|r1-1776)/, 'sonar*, r1-1776')),
  entry('azure-openai', 'Azure OpenAI', true, any('any name: it is the deployment name in the endpoint URL'), any('any name: the embedding deployment')),
  entry('custom', 'Custom OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp, LM Studio)', true, any('any model name the server knows'), any('any model name the server knows')),
];

const byId = new Map(providerCatalog.map((e) => [e.id, e]));

export function catalogEntry(id: string): CatalogEntry | undefined {
  return byId.get(id);
}

/** `use`: which of the entry's lists applies; a vendor without embeddings serves no model for them. */
export function servesModel(entry: CatalogEntry, model: string, use: ModelUse = 'chat'): boolean {
  const m = use === 'chat' ? entry.models : entry.embeddingModels;
  if (!m) return false;
  if (m.kind === 'any') return true;
  if (m.kind === 'list') return m.models.includes(model);
  return m.pattern.test(model);
}

/** `<catalog id>/<model>` selects that provider alone (the LiteLLM convention); null otherwise. */
export function explicitSelection(model: string): { provider: string; vendorModel: string } | null {
  const slash = model.indexOf('/');
  if (slash <= 0 || slash === model.length - 1) return null;
  const provider = model.slice(0, slash);
  return byId.has(provider) ? { provider, vendorModel: model.slice(slash + 1) } : null;
}

/** What a model is asked for: chat (and Messages), or embeddings. */
export type ModelUse = 'chat' | 'embeddings';

export interface Candidate {
  connection: ProviderConnection;
  vendorModel: string;
}

/** Priority ascending, then the older connection, then provider id, then connection id: total and stable. */
export function compareConnections(a: ProviderConnection, b: ProviderConnection): number {
  return (
    a.priority - b.priority ||
    a.createdAt.getTime() - b.createdAt.getTime() ||
    (a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/**
 * The connections that may serve `model`, in the order they are tried. An explicit
 * `<provider>/` prefix narrows the candidates to that provider and strips the prefix;
 * otherwise every connection whose provider's matcher accepts the name is a candidate.
 */
export function candidatesFor(model: string, connections: ProviderConnection[], use: ModelUse = 'chat'): Candidate[] {
  const explicit = explicitSelection(model);
  const out: Candidate[] = [];
  for (const connection of connections) {
    const entry = byId.get(connection.provider);
    if (explicit) {
      if (connection.provider === explicit.provider && (use === 'chat' || entry?.embeddingModels)) out.push({ connection, vendorModel: explicit.vendorModel });
      continue;
    }
    if (entry && servesModel(entry, model, use)) out.push({ connection, vendorModel: model });
  }
  if (out.length > 1) out.sort((a, b) => compareConnections(a.connection, b.connection));
  return out;
}
