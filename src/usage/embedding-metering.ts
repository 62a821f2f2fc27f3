// Metering of an embeddings call, as chat's: admitted through the same quota gate (a spend
// quota holds its worst case: every input byte a token at the model's input price), settled
// with the tokens used, priced with the one price table and recorded in the usage ledger.
import { ApiError } from '../errors.js';
import { costOf, nanosPerToken, priceOf, type PriceTable } from '../pricing/prices.js';
import { estimateEmbeddingTokens, inputsOf, type EmbeddingRequest } from '../providers/embeddings/types.js';
import type { EmbeddingResult } from '../providers/embeddings/route.js';
import type { Usage } from '../providers/types.js';
import type { QuotaGate, QuotaSubject } from '../quotas/gate.js';
import type { SpendDemand } from '../quotas/spend-demand.js';
import type { Clock } from '../quotas/windows.js';
import type { Ledger } from './ledger.js';

export interface EmbeddingMeteringDeps {
  gate: QuotaGate;
  ledger: Ledger;
  prices: PriceTable;
  clock: Clock;
  observe?: ((kind: 'direct' | 'ladder', ok: boolean, costNanos: number) => void) | undefined;
}

/** An upper bound on the input's tokens: no tokenizer makes more tokens than UTF-8 bytes. */
export function embeddingTokenBound(request: EmbeddingRequest): number {
  let bound = 0;
  for (const one of inputsOf(request)) bound += typeof one === 'string' ? Buffer.byteLength(one, 'utf8') : one.length;
  return bound;
}

function embeddingDemand(request: EmbeddingRequest, deps: EmbeddingMeteringDeps): SpendDemand {
  const price = priceOf(request.model, deps.prices);
  return { promptNanos: embeddingTokenBound(request) * nanosPerToken(price.input), perCapTokenNanos: 0, lowerable: false, maxCap: 0, minCap: 0 };
}

/** Admits, runs and records one embeddings call; returns its result, cost and the rate headers. */
export async function meterEmbedding(deps: EmbeddingMeteringDeps, subject: QuotaSubject, request: EmbeddingRequest, call: () => Promise<EmbeddingResult>) {
  const admission = await deps.gate.admit(subject, estimateEmbeddingTokens(request), () => embeddingDemand(request, deps));
  const record = (provider: string | null, usage: Usage, costNanos: number, outcome: string) =>
    deps.ledger.record({ at: deps.clock(), accountId: subject.accountId, apiKeyId: subject.apiKeyId, model: request.model, ladder: null, instanceId: null, provider, usage, costNanos, outcome });
  try {
    const result = await call();
    const usage: Usage = { prompt_tokens: result.usage.prompt_tokens, completion_tokens: 0, total_tokens: result.usage.total_tokens };
    const costNanos = costOf(request.model, usage, deps.prices);
    admission.settle(usage, costNanos);
    record(result.provider, usage, costNanos, 'ok');
    deps.observe?.('direct', true, costNanos);
    return { result, costNanos, headers: admission.headers() };
  } catch (error) {
    admission.settle(null);
    record(null, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, 0, error instanceof ApiError ? error.code : 'internal_error');
    deps.observe?.('direct', false, 0);
    throw error;
  }
}
