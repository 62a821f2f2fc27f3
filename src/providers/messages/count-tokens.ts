// POST /v1/messages/count_tokens through the router: only vendors that count a Messages request
// without running it are candidates (Anthropic's count_tokens); anything else is a clear 400.
import { invalidRequest } from '../../errors.js';
import { adapters } from '../adapters/index.js';
import type { VendorAdapter } from '../adapters/types.js';
import { postJson, type VendorExchange } from '../call-vendor.js';
import { candidatesFor, type Candidate } from '../catalog.js';
import { notServed } from '../route-errors.js';
import type { Attempt, ProviderConnection } from '../types.js';
import type { MessagesBody } from './types.js';

export interface TokenCount {
  inputTokens: number;
  provider: string;
  attempts: Attempt[];
  upstreamMs: number;
}

export function countingCandidates(model: string, connections: ProviderConnection[]): Candidate[] {
  const all = candidatesFor(model, connections);
  if (all.length === 0) throw notServed(model, connections);
  const counting = all.filter((c) => adapters[c.connection.provider]?.countTokens);
  if (counting.length > 0) return counting;
  const providers = [...new Set(all.map((c) => c.connection.provider))].join(', ');
  throw invalidRequest(
    'token_counting_not_supported',
    `Model "${model}" is served by ${providers}, which cannot count tokens without running the request; token counting needs a connection to a vendor that offers it (anthropic).`,
    'model',
  );
}

/** `betas`: the caller's `anthropic-beta`, passed on. */
export function countingExchange(body: MessagesBody, betas?: string) {
  const counting = (adapter: VendorAdapter) => adapter.countTokens!;
  return {
    operation: 'count_tokens' as const,
    keepsDeadline: true,
    body: (adapter: VendorAdapter, vendorModel: string) => JSON.stringify(counting(adapter).body(body, vendorModel)),
    send: (call: VendorExchange) => postJson(betas ? Object.assign(call, { headers: { 'anthropic-beta': betas } }) : call, counting(call.adapter).path(call.target.basePath), (answer) => counting(call.adapter).parse(answer)),
  };
}
