// What a call may cost at worst, for spend quotas to reserve before it starts (docs/quotas.md,
// "Spend quotas"): its prompt at a token count no tokenizer exceeds, plus its output cap at
// the model's output price. A call whose cap is ours to choose (the caller set none, or a
// ladder chose it) gets the cap the remaining quota pays, between MIN_OUTPUT_TOKENS and
// DEFAULT_MAX_OUTPUT_TOKENS, as ladder budgets do.
import { DEFAULT_MAX_OUTPUT_TOKENS, MIN_OUTPUT_TOKENS, PROMPT_OVERHEAD_TOKENS } from '../ladders/engine/budget.js';
import { nanosPerToken, type ModelPrice } from '../pricing/prices.js';
import { THINKING_BUDGET } from '../providers/adapters/content.js';
import type { ChatRequest } from '../providers/types.js';

/** Tokens assumed for one image, audio or file part: more than any vendor counts for an image. */
export const MEDIA_PART_TOKENS = 2000;

export interface SpendDemand {
  /** The prompt's worst case, in nanos (fractional: rounded up with the cap in worstCaseNanos). */
  promptNanos: number;
  /** Nanos per token of the output cap (the output price, times `n` choices). */
  perCapTokenNanos: number;
  /** The prompt's worst case includes any thinking budget a vendor adds on top of the cap. */
  /** Whether the cap may be lowered to what the quota pays (the caller did not choose it). */
  lowerable: boolean;
  /** The largest and the smallest cap worth reserving for. */
  maxCap: number;
  minCap: number;
}

/** An upper bound on a request's prompt tokens: no tokenizer makes more tokens than UTF-8 bytes. */
export function promptTokenBound(request: ChatRequest): number {
  let media = 0;
  for (const m of request.messages) {
    if (!Array.isArray(m.content)) continue;
    for (const part of m.content) if (part.type !== 'text' && part.type !== 'refusal') media += 1;
  }
  // The whole body counts: messages, tools, schemas; its JSON syntax only adds to the bound.
  return Buffer.byteLength(JSON.stringify(request), 'utf8') + PROMPT_OVERHEAD_TOKENS * request.messages.length + media * MEDIA_PART_TOKENS;
}

/** The worst case of `request` at `price`; `chosenByUs` for calls whose max_tokens a ladder set. */
export function spendDemand(request: ChatRequest, price: ModelPrice, chosenByUs: boolean): SpendDemand {
  const cap = request.max_completion_tokens ?? request.max_tokens ?? null;
  const perToken = nanosPerToken(price.output);
  const thinking = request.reasoning_effort ? (THINKING_BUDGET[request.reasoning_effort] ?? 0) : 0;
  const choices = request.n ?? 1;
  const lowerable = chosenByUs || cap === null;
  const maxCap = lowerable ? Math.min(cap ?? DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MAX_OUTPUT_TOKENS) : cap!;
  return {
    promptNanos: promptTokenBound(request) * nanosPerToken(price.input) + thinking * choices * perToken,
    perCapTokenNanos: perToken * choices,
    lowerable,
    maxCap,
    minCap: lowerable ? Math.min(MIN_OUTPUT_TOKENS, maxCap) : maxCap,
  };
}

/** Whole nanos, rounded up: what a spend counter holds for the call. */
export const worstCaseNanos = (d: SpendDemand, cap: number) => Math.ceil(d.promptNanos + cap * d.perCapTokenNanos);

/** The request with its output cap set to `cap`, in the member it already uses (max_tokens when none). */
export function withCap(request: ChatRequest, cap: number): ChatRequest {
  return request.max_completion_tokens !== undefined ? { ...request, max_completion_tokens: cap } : { ...request, max_tokens: cap };
}
