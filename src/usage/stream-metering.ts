// Metering of a streamed direct call: admitted through the same quota gate before the stream
// opens, then settled and recorded once, however the stream ends (complete, cut, cancelled).
// A stream cut before the vendor's usage report is charged an estimate, never nothing.
import { costOf, type PriceTable } from '../pricing/prices.js';
import type { ChatRequest, Usage } from '../providers/types.js';
import type { Admission, QuotaSubject } from '../quotas/gate.js';
import type { Clock } from '../quotas/windows.js';
import type { Ledger } from './ledger.js';

export interface StreamMeter {
  /** The request to send: the one asked, or with the cap a spend quota lowered. */
  request: ChatRequest;
  /** x-ratelimit-* headers, sent with the stream's headers. */
  headers(): Record<string, string>;
  /** Settles the admission and writes the ledger row, once (later calls do nothing). Returns the cost in USD. */
  finish(provider: string | null, usage: Usage | null, outcome: string): number;
}

export interface StreamMeteringDeps {
  ledger: Ledger;
  prices: PriceTable;
  clock: Clock;
  observe?: ((kind: 'direct' | 'ladder', ok: boolean, costNanos: number) => void) | undefined;
}

const NO_USAGE: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/** Meters one streamed call admitted by metering's admit (402/429 came before any byte was sent, as for a whole answer). */
export function meterStream(deps: StreamMeteringDeps, subject: QuotaSubject, request: ChatRequest, admission: Admission): StreamMeter {
  let finished = false;
  return {
    request,
    headers: () => admission.headers(),
    finish(provider, usage, outcome) {
      if (finished) return 0;
      finished = true;
      const costNanos = usage ? costOf(request.model, usage, deps.prices) : 0;
      admission.settle(usage, costNanos);
      deps.ledger.record({
        at: deps.clock(),
        accountId: subject.accountId,
        apiKeyId: subject.apiKeyId,
        model: request.model,
        ladder: null,
        instanceId: null,
        provider,
        usage: usage ?? NO_USAGE,
        costNanos,
        outcome,
      });
      deps.observe?.('direct', outcome === 'ok', costNanos);
      return costNanos;
    },
  };
}

/**
 * What a stream that started is charged: the vendor's report when the stream completed or the
 * report has the completion; else (cut or cancelled before it) the reported part, and the rest
 * estimated: `promptEstimate` (prompt characters / 4) and relayed characters / 4.
 */
export function streamedUsage(reported: Usage | null, completed: boolean, relayedChars: number, promptEstimate: number): Usage {
  if (reported && (completed || reported.completion_tokens > 0)) return reported;
  const prompt = reported?.prompt_tokens || promptEstimate;
  const completion = Math.ceil(relayedChars / 4);
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (reported?.prompt_tokens_details) usage.prompt_tokens_details = reported.prompt_tokens_details;
  return usage;
}
