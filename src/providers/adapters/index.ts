// The id -> adapter map. The OpenAI-compatible vendors are data: a base URL and, rarely, a quirk.
import { anthropicAdapter } from './anthropic.js';
import { geminiAdapter } from './gemini.js';
import { openAICompatible } from './openai-compatible.js';
import type { VendorAdapter } from './types.js';
import type { OpenAIEmbeddingsSpec } from '../embeddings/openai-embeddings.js';

/** Azure OpenAI data-plane inference API version (latest GA when written). */
export const AZURE_API_VERSION = '2024-10-21';

// OpenAI's reasoning models reject `max_tokens`; `max_completion_tokens` is their name for it.
const openAIMaxTokens = (model: string) => (/^(o[1-9]|gpt-5)/.test(model) ? 'max_completion_tokens' : 'max_tokens');

const compatible = (id: string, defaultBaseUrl: string | null, embeddings?: OpenAIEmbeddingsSpec) => openAICompatible({ id, defaultBaseUrl, ...(embeddings ? { embeddings } : {}) });

// What each vendor's embeddings endpoint takes of OpenAI's request (docs/providers.md, "Embeddings").
const OPENAI_EMBEDDINGS: OpenAIEmbeddingsSpec = { dimensions: 'dimensions', tokens: true, user: true, base64: true };

export const adapters: Readonly<Record<string, VendorAdapter>> = {
  openai: openAICompatible({ id: 'openai', defaultBaseUrl: 'https://api.openai.com/v1', maxTokensField: openAIMaxTokens, embeddings: OPENAI_EMBEDDINGS }),
  anthropic: anthropicAdapter,
  google: geminiAdapter,
  // Mistral refuses members it does not know (422) and sends usage on its last chunk unasked.
  mistral: openAICompatible({ id: 'mistral', defaultBaseUrl: 'https://api.mistral.ai/v1', streamUsageOption: false,
    embeddings: { dimensions: 'output_dimension', tokens: false, user: false, base64: false } }),
  groq: compatible('groq', 'https://api.groq.com/openai/v1'),
  deepseek: compatible('deepseek', 'https://api.deepseek.com/v1'),
  xai: compatible('xai', 'https://api.x.ai/v1'),
  together: compatible('together', 'https://api.together.xyz/v1', { dimensions: false, tokens: false, user: false, base64: false }),
  fireworks: compatible('fireworks', 'https://api.fireworks.ai/inference/v1', { dimensions: 'dimensions', tokens: false, user: false, base64: false }),
  openrouter: compatible('openrouter', 'https://openrouter.ai/api/v1', { dimensions: 'dimensions', tokens: false, user: true, base64: false }),
  cerebras: compatible('cerebras', 'https://api.cerebras.ai/v1'),
  // Perplexity publishes no model list endpoint.
  perplexity: openAICompatible({ id: 'perplexity', defaultBaseUrl: 'https://api.perplexity.ai', modelList: false, streamUsageOption: false }),
  'azure-openai': openAICompatible({
    id: 'azure-openai',
    defaultBaseUrl: null,
    headers: (apiKey) => ({ 'api-key': apiKey, 'content-type': 'application/json' }),
    path: (basePath, deployment) =>
      `${basePath}/openai/deployments/${encodeURIComponent(deployment)}/chat/completions?api-version=${AZURE_API_VERSION}`,
    modelInBody: false,
    requestIdHeader: 'apim-request-id',
    // Deployment names are the model names, and the data-plane key cannot list them.
    modelList: false,
    embeddings: {
      ...OPENAI_EMBEDDINGS,
      path: (basePath, deployment) => `${basePath}/openai/deployments/${encodeURIComponent(deployment)}/embeddings?api-version=${AZURE_API_VERSION}`,
      modelInBody: false,
    },
  }),
  // Self-hosted servers (vLLM, Ollama, llama.cpp) differ in what they take: floats are asked for and encoded here.
  custom: compatible('custom', null, { dimensions: 'dimensions', tokens: true, user: false, base64: false }),
};
