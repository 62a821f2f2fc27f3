// Where model calls meet quotas and the ledger: the direct route wraps its call in
// `direct()`, a ladder run wraps its model-call function in `ladderCall()`; both admit the call
// through the quota gate, settle it, price it with the one price table and record it.
import type { FastifyReply } from 'fastify';
import { ApiError } from '../errors.js';
import { usdDecimal } from '../money.js';
import { costOf, priceOf, type PriceTable } from '../pricing/prices.js';
import type { ChatRequest, ChatResult, ModelCall, Usage } from '../providers/types.js';
import { UNLIMITED, type QuotaGate, type QuotaSubject } from '../quotas/gate.js';
import { spendDemand, withCap } from '../quotas/spend-demand.js';
import type { Clock } from '../quotas/windows.js';
import type { UsageEntry } from './entry.js';
import type { Ledger } from './ledger.js';
import { meterStream } from './stream-metering.js';
import { meterEmbedding } from './embedding-metering.js';
import type { EmbeddingRequest } from '../providers/embeddings/types.js';
import type { EmbeddingResult } from '../providers/embeddings/route.js';

/** Completion tokens assumed for the token estimate of a call that sets no max_tokens. */
export const DEFAULT_COMPLETION_ESTIMATE = 256;

/** Prompt characters / 4, plus max_tokens (or the default): charged up front against tokens per minute. */
export function estimateTokens(request: ChatRequest): number {
  return estimatePromptTokens(request) + (request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_COMPLETION_ESTIMATE);
}

/** The prompt's part of estimateTokens: what a stream cut before its usage report is charged for its prompt. */
export function estimatePromptTokens(request: ChatRequest): number {
  let chars = 0;
  for (const m of request.messages) {
    if (typeof m.content === 'string') chars += m.content.length;
    else for (const part of m.content ?? []) chars += part.type === 'text' ? part.text.length : 0;
  }
  return Math.ceil(chars / 4);
}

/** The `x-ladder-cost-usd` header value: the exact USD, 9 decimals. */
export const formatCost = usdDecimal;

export interface LadderCallContext {
  subject: QuotaSubject;
  /** `author/slug`. */
  ladder: string;
  instanceId: string;
}

const errorCode = (error: unknown) => (error instanceof ApiError ? error.code : 'internal_error');

export interface MeteringDeps {
  gate: QuotaGate;
  ledger: Ledger;
  prices: PriceTable;
  clock: Clock;
  /** Told of every metered call, for the metrics (docs/metrics.md). Default: nobody. */
  observe?: (kind: 'direct' | 'ladder', ok: boolean, costNanos: number) => void;
}

export function createMetering(deps: MeteringDeps) {
  const { gate, ledger, prices, clock, observe } = deps;
  const noUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

  /**
   * Admits a call (a spend quota holds its worst case, and may lower a cap that is ours to
   * choose: then the call must be sent as `request` says) and returns how to settle it.
   */
  async function admit(subject: QuotaSubject, request: ChatRequest, ladderCall: boolean) {
    const admission = await gate.admit(subject, estimateTokens(request), () => spendDemand(request, priceOf(request.model, prices), ladderCall));
    return { admission, request: admission.maxTokens === undefined ? request : withCap(request, admission.maxTokens) };
  }

  async function metered(subject: QuotaSubject, asked: ChatRequest, call: (request: ChatRequest) => Promise<ChatResult>, ladder: Omit<LadderCallContext, 'subject'> | null) {
    const { admission, request } = await admit(subject, asked, ladder !== null);
    // Every member spelt out: `{ ...base, more }` takes a slow path in Node 20's V8 (µs per call).
    const entry = (provider: string | null, usage: Usage, costNanos: number, outcome: string): UsageEntry => ({
      at: clock(),
      accountId: subject.accountId,
      apiKeyId: subject.apiKeyId,
      model: request.model,
      ladder: ladder?.ladder ?? null,
      instanceId: ladder?.instanceId ?? null,
      provider,
      usage,
      costNanos,
      outcome,
    });
    try {
      const result = await call(request);
      const costNanos = costOf(request.model, result.usage, prices);
      admission.settle(result.usage, costNanos);
      ledger.record(entry(result.provider, result.usage, costNanos, 'ok'));
      observe?.(ladder ? 'ladder' : 'direct', true, costNanos);
      return { result, costNanos, admission };
    } catch (error) {
      admission.settle(null);
      ledger.record(entry(null, noUsage, 0, errorCode(error)));
      observe?.(ladder ? 'ladder' : 'direct', false, 0);
      throw error;
    }
  }

  return {
    /**
     * One direct call: quota check, the call, cost and rate headers on the reply, a ledger row.
     * `call` gets the request to send: the one given, or with the cap a spend quota lowered.
     */
    async direct(subject: QuotaSubject, reply: FastifyReply, request: ChatRequest, call: (request: ChatRequest) => Promise<ChatResult>): Promise<ChatResult> {
      const { result, costNanos, admission } = await metered(subject, request, call, null);
      reply.header('x-ladder-cost-usd', formatCost(costNanos));
      // Rate headers only where a rate limit applies; no spread (Node 20's V8 builds one on a slow path).
      if (admission !== UNLIMITED) reply.headers(admission.headers());
      return result;
    },

    /**
     * For ladder runs, synchronous or background: wraps the run's model-call function so that
     * every call is admitted by the quotas (429/402 end the run as themselves) and recorded.
     */
    ladderCall(context: LadderCallContext, call: ModelCall): ModelCall {
      const { subject, ...ladder } = context;
      return async (request, signal, onDelta) => (await metered(subject, request, (sent) => call(sent, signal, onDelta), ladder)).result;
    },

    /** One streamed direct call (src/usage/stream-metering.ts): admitted now, settled by the stream's end. */
    async streamed(subject: QuotaSubject, asked: ChatRequest) {
      const { admission, request } = await admit(subject, asked, false);
      return meterStream(deps, subject, request, admission);
    },

    /** One embeddings call (src/usage/embedding-metering.ts): quotas, cost and rate headers on the reply, a ledger row. */
    async embedding(subject: QuotaSubject, reply: FastifyReply, request: EmbeddingRequest, call: () => Promise<EmbeddingResult>): Promise<EmbeddingResult> {
      const { result, costNanos, headers } = await meterEmbedding(deps, subject, request, call);
      reply.headers({ 'x-ladder-cost-usd': formatCost(costNanos), ...headers });
      return result;
    },

    /** When a run starts (before its instance is recorded or resumed): 402/429 if the subject is already over a limit. */
    checkRunStart: (subject: QuotaSubject) => gate.checkRunStart(subject),

    /** For a ladder answer: its spend and the subject's current rate headers. */
    async setLadderHeaders(subject: QuotaSubject, reply: FastifyReply, spendNanos: number): Promise<void> {
      reply.headers({ 'x-ladder-cost-usd': formatCost(spendNanos), ...(await gate.headers(subject)) });
    },
  };
}

export type Metering = ReturnType<typeof createMetering>;

export const subjectOf = (principal: { accountId: string; username: string; apiKeyId: string }): QuotaSubject => ({
  accountId: principal.accountId,
  username: principal.username,
  apiKeyId: principal.apiKeyId || null,
});
