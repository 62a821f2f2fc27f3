// Embeddings through the router: the candidates are the connections whose vendor embeds with
// the model, each asked in its own wire format; fallback, breaker and deadlines are the router's.
import { invalidRequest } from '../../errors.js';
import { adapters } from '../adapters/index.js';
import type { VendorAdapter } from '../adapters/types.js';
import { postJson, type VendorExchange } from '../call-vendor.js';
import { candidatesFor, explicitSelection, type Candidate } from '../catalog.js';
import type { Attempt, ProviderConnection } from '../types.js';
import type { EmbeddingOutput, EmbeddingRequest } from './types.js';

export interface EmbeddingResult extends EmbeddingOutput {
  provider: string;
  attempts: Attempt[];
  upstreamMs: number;
}

/** The connections that can embed with `model`, in order; 400 unsupported_model when none can. */
export function embeddingCandidates(model: string, connections: ProviderConnection[]): Candidate[] {
  const candidates = candidatesFor(model, connections, 'embeddings').filter((c) => adapters[c.connection.provider]?.embeddings);
  if (candidates.length > 0) return candidates;
  const explicit = explicitSelection(model);
  const chatOnly = candidatesFor(model, connections).map((c) => c.connection.provider);
  const why = explicit && connections.some((c) => c.provider === explicit.provider)
    ? `provider "${explicit.provider}" has no embeddings API`
    : chatOnly.length > 0
      ? `it is served for chat only (by ${[...new Set(chatOnly)].join(', ')}), and none of your connections embeds with it`
      : 'none of your provider connections embeds with it';
  throw invalidRequest('unsupported_model', `Model "${model}" cannot be used for embeddings: ${why}. docs/providers.md lists which vendor embeds with which models.`, 'model');
}

/** `maxResponseBytes`: embeddings answers get their own bound (PROVIDER_MAX_EMBEDDINGS_RESPONSE_BYTES). */
export function embeddingExchange(request: EmbeddingRequest, maxResponseBytes: number) {
  const support = (adapter: VendorAdapter) => adapter.embeddings!;
  return {
    operation: 'embeddings' as const,
    keepsDeadline: true,
    body: (adapter: VendorAdapter, vendorModel: string) => JSON.stringify(support(adapter).body(request, vendorModel)),
    send: (call: VendorExchange) => postJson(Object.assign(call, { maxResponseBytes }), support(call.adapter).path(call.target.basePath, call.vendorModel), (body) => support(call.adapter).parse(body, request)),
  };
}
