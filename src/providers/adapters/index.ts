// The id -> adapter map. The OpenAI-compatible vendors are data: a base URL and, rarely, a quirk.
import { anthropicAdapter } from './anthropic.js';
import { geminiAdapter } from './gemini.js';
import { openAICompatible } from './openai-compatible.js';
import type { VendorAdapter } from './types.js';

/** Azure OpenAI data-plane inference API version (latest GA when written). */
export const AZURE_API_VERSION = '2024-10-21';

// OpenAI's reasoning models reject `max_tokens`; `max_completion_tokens` is their name for it.
const openAIMaxTokens = (model: string) => (/^(o[1-9]|gpt-5)/.test(model) ? 'max_completion_tokens' : 'max_tokens');

const compatible = (id: string, defaultBaseUrl: string | null) => openAICompatible({ id, defaultBaseUrl });

export const adapters: Readonly<Record<string, VendorAdapter>> = {
  openai: openAICompatible({ id: 'openai', defaultBaseUrl: 'https://api.openai.com/v1', maxTokensField: openAIMaxTokens }),
  anthropic: anthropicAdapter,
  google: geminiAdapter,
  // Mistral refuses members it does not know (422) and sends usage on its last chunk unasked.
  mistral: openAICompatible({ id: 'mistral', defaultBaseUrl: 'https://api.mistral.ai/v1', streamUsageOption: false }),
  groq: compatible('groq', 'https://api.groq.com/openai/v1'),
  deepseek: compatible('deepseek', 'https://api.deepseek.com/v1'),
  xai: compatible('xai', 'https://api.x.ai/v1'),
  together: compatible('together', 'https://api.together.xyz/v1'),
  fireworks: compatible('fireworks', 'https://api.fireworks.ai/inference/v1'),
  openrouter: compatible('openrouter', 'https://openrouter.ai/api/v1'),
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
  }),
  custom: compatible('custom', null),
};
