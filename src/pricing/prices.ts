// Model prices, in USD per million tokens: the one source of cost for direct calls, ladder
// budgets, the usage ledger and spend quotas. Operators add or override entries with PRICES_FILE.
// List prices of the vendors' standard (non-batch, short-context) tier as published in late
// 2025, with the cache-read price where the vendor publishes one; update them here when a vendor changes its price list.
import { NANOS_PER_USD } from '../money.js';
import type { Usage } from '../providers/types.js';

export interface ModelPrice {
  /** USD per million prompt tokens. */
  input: number;
  /** USD per million completion tokens. */
  output: number;
  /** USD per million prompt tokens read from the vendor's cache (usage.prompt_tokens_details.cached_tokens); absent: `input`. */
  cachedInput?: number;
  /** USD per million reasoning tokens (usage.completion_tokens_details.reasoning_tokens); absent: `output`. */
  reasoning?: number;
}

export interface PriceTable {
  /** Keyed by lower-case canonical model name; dated and suffixed variants match by prefix. */
  models: Readonly<Record<string, ModelPrice>>;
  /** Charged for any model the table does not know. */
  unknownModel: ModelPrice;
}

/** `cached`: the vendor's price for cache reads, where it publishes one. */
const p = (input: number, output: number, cached?: number): ModelPrice => (cached === undefined ? { input, output } : { input, output, cachedInput: cached });

export const knownModelPrices: Readonly<Record<string, ModelPrice>> = {
  // openai
  'gpt-5': p(1.25, 10, 0.125),
  'gpt-5-mini': p(0.25, 2, 0.025),
  'gpt-5-nano': p(0.05, 0.4, 0.005),
  'gpt-4.1': p(2, 8, 0.5),
  'gpt-4.1-mini': p(0.4, 1.6, 0.1),
  'gpt-4.1-nano': p(0.1, 0.4, 0.025),
  'gpt-4o': p(2.5, 10, 1.25),
  'gpt-4o-mini': p(0.15, 0.6, 0.075),
  'chatgpt-4o-latest': p(5, 15),
  'gpt-4-turbo': p(10, 30),
  'gpt-4': p(30, 60),
  'gpt-3.5-turbo': p(0.5, 1.5),
  'o1': p(15, 60, 7.5),
  'o1-mini': p(1.1, 4.4),
  'o1-pro': p(150, 600),
  'o3': p(2, 8, 0.5),
  'o3-mini': p(1.1, 4.4, 0.55),
  'o3-pro': p(20, 80),
  'o4-mini': p(1.1, 4.4, 0.275),
  'gpt-oss-120b': p(0.15, 0.75),
  'gpt-oss-20b': p(0.1, 0.5),
  // anthropic
  'claude-opus-4-5': p(5, 25, 0.5),
  'claude-opus-4-1': p(15, 75, 1.5),
  'claude-opus-4': p(15, 75, 1.5),
  'claude-sonnet-4-5': p(3, 15, 0.3),
  'claude-sonnet-4': p(3, 15, 0.3),
  'claude-haiku-4-5': p(1, 5, 0.1),
  'claude-3-7-sonnet': p(3, 15, 0.3),
  'claude-3-5-sonnet': p(3, 15),
  'claude-3-5-haiku': p(0.8, 4, 0.08),
  'claude-3-opus': p(15, 75),
  'claude-3-sonnet': p(3, 15),
  'claude-3-haiku': p(0.25, 1.25),
  // google
  'gemini-2.5-pro': p(1.25, 10),
  'gemini-2.5-flash': p(0.3, 2.5),
  'gemini-2.5-flash-lite': p(0.1, 0.4),
  'gemini-2.0-flash': p(0.1, 0.4),
  'gemini-2.0-flash-lite': p(0.075, 0.3),
  'gemini-1.5-pro': p(1.25, 5),
  'gemini-1.5-flash': p(0.075, 0.3),
  'gemini-1.5-flash-8b': p(0.0375, 0.15),
  // mistral
  'mistral-large': p(2, 6),
  'mistral-medium': p(0.4, 2),
  'mistral-small': p(0.1, 0.3),
  'magistral-medium': p(2, 5),
  'magistral-small': p(0.5, 1.5),
  'codestral': p(0.3, 0.9),
  'devstral-small': p(0.1, 0.3),
  'devstral-medium': p(0.4, 2),
  'pixtral-large': p(2, 6),
  'pixtral-12b': p(0.15, 0.15),
  'open-mistral-nemo': p(0.15, 0.15),
  'ministral-8b': p(0.1, 0.1),
  'ministral-3b': p(0.04, 0.04),
  // groq (open-weight models as Groq serves them)
  'llama-3.3-70b-versatile': p(0.59, 0.79),
  'llama-3.1-8b-instant': p(0.05, 0.08),
  'llama-4-scout-17b-16e-instruct': p(0.11, 0.34),
  'llama-4-maverick-17b-128e-instruct': p(0.2, 0.6),
  'qwen3-32b': p(0.29, 0.59),
  'kimi-k2-instruct': p(1, 3),
  'gemma2-9b-it': p(0.2, 0.2),
  // deepseek
  'deepseek-chat': p(0.28, 0.42, 0.028),
  'deepseek-reasoner': p(0.28, 0.42, 0.028),
  // xai
  'grok-4-fast': p(0.2, 0.5),
  'grok-4': p(3, 15),
  'grok-3-mini': p(0.3, 0.5),
  'grok-3': p(3, 15),
  'grok-code-fast-1': p(0.2, 1.5),
  'grok-2': p(2, 10),
  // embeddings: input tokens only
  'text-embedding-3-small': p(0.02, 0),
  'text-embedding-3-large': p(0.13, 0),
  'text-embedding-ada-002': p(0.1, 0),
  'gemini-embedding-001': p(0.15, 0),
  'mistral-embed': p(0.1, 0),
  'codestral-embed': p(0.15, 0),
  'bge-large-en-v1.5': p(0.02, 0),
  'bge-base-en-v1.5': p(0.008, 0),
  'm2-bert-80m-8k-retrieval': p(0.008, 0),
  'nomic-embed-text-v1.5': p(0.008, 0),
};

/** Deliberately high so that an unpriced model cannot quietly outrun a ladder's budget. */
export const defaultUnknownModelPrice: ModelPrice = p(10, 30);

export function createPriceTable(options: { unknownModel?: ModelPrice; models?: Record<string, ModelPrice> } = {}): PriceTable {
  const models: Record<string, ModelPrice> = { ...knownModelPrices };
  for (const [name, price] of Object.entries(options.models ?? {})) models[name.toLowerCase()] = price;
  return { models, unknownModel: options.unknownModel ?? defaultUnknownModelPrice };
}

export const defaultPriceTable: PriceTable = createPriceTable();

// A suffix only extends a known name after one of these, so `gpt-4o-2024-08-06` is gpt-4o
// while `gpt-4.5-preview` is not mistaken for gpt-4.
const VARIANT_SEPARATORS = new Set(['-', '@', ':']);

/** The table's entry for a model name, or null when the table does not know it. */
export function findModelPrice(model: string, table: PriceTable): ModelPrice | null {
  // Routers and aggregators spell models as `vendor/model` (or deeper); the price is the model's.
  const name = model.trim().toLowerCase().split('/').pop() ?? '';
  const exact = table.models[name];
  if (exact) return exact;
  let best: { length: number; price: ModelPrice } | null = null;
  for (const [known, price] of Object.entries(table.models)) {
    if (known.length >= name.length || !name.startsWith(known)) continue;
    if (!VARIANT_SEPARATORS.has(name.charAt(known.length))) continue;
    if (!best || known.length > best.length) best = { length: known.length, price };
  }
  return best?.price ?? null;
}

export function priceOf(model: string, table: PriceTable = defaultPriceTable): ModelPrice {
  return findModelPrice(model, table) ?? table.unknownModel;
}

/** A price in USD per million tokens as nanos per token, for worst-case estimates (not exact: 0.0375 is 37.5). */
export const nanosPerToken = (usdPerMillion: number): number => usdPerMillion * 1000;

/** A price as an integer number of nanos per million tokens (prices have at most 9 decimals). */
const nanosPerMillion = (usdPerMillion: number): number => Math.round(usdPerMillion * NANOS_PER_USD);

/**
 * The cost of one call's usage in nanos (docs/quotas.md, "Money"): the exact sum of tokens times
 * their price, rounded once to whole nanos, half up. Cached prompt tokens and reasoning tokens
 * are parts of the prompt and completion counts; where the price has their own rate, that part
 * is charged at it.
 */
export function costOf(model: string, usage: Usage, table: PriceTable = defaultPriceTable): number {
  const price = priceOf(model, table);
  const cached = price.cachedInput === undefined ? 0 : Math.min(usage.prompt_tokens, usage.prompt_tokens_details?.cached_tokens ?? 0);
  const reasoning = price.reasoning === undefined ? 0 : Math.min(usage.completion_tokens, usage.completion_tokens_details?.reasoning_tokens ?? 0);
  const input = usage.prompt_tokens - cached;
  const output = usage.completion_tokens - reasoning;
  const cachedRate = price.cachedInput ?? 0;
  const reasoningRate = price.reasoning ?? 0;
  // Summed without building the parts: this runs on every call.
  const units = input * nanosPerMillion(price.input) + cached * nanosPerMillion(cachedRate) + output * nanosPerMillion(price.output) + reasoning * nanosPerMillion(reasoningRate);
  if (units > Number.MAX_SAFE_INTEGER) {
    // Beyond 2^53 a double no longer holds every integer (10M tokens at $1,000 per million): redo it in BigInt.
    const parts: Array<[number, number]> = [[input, price.input], [cached, cachedRate], [output, price.output], [reasoning, reasoningRate]];
    let exact = 0n;
    for (const [tokens, usd] of parts) exact += BigInt(Math.round(tokens)) * BigInt(nanosPerMillion(usd));
    return Number((exact + 500_000n) / 1_000_000n);
  }
  const rest = units % 1_000_000;
  return (units - rest) / 1_000_000 + (rest >= 500_000 ? 1 : 0);
}
