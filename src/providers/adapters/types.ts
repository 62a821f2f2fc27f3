import type { ChatRequest, Choice, FinishReason, Usage } from '../types.js';
import { storableCount } from '../../storable.js';
import type { StreamSupport } from '../stream/types.js';
import type { EmbeddingSupport } from '../embeddings/types.js';
import type { TokenCounting } from '../messages/types.js';
import type { VendorErrorKind } from '../vendor-errors.js';

/** What every adapter extracts from a successful vendor body. */
export interface VendorOutput {
  /** The first choice's text, '' when none. */
  content: string;
  finishReason: FinishReason;
  usage: Usage;
  choices: Choice[];
  model?: string | undefined;
  systemFingerprint?: string | undefined;
  serviceTier?: string | undefined;
  /** The vendor's answer as it came, when the request came in its own format (Messages to Anthropic): passed on unchanged. */
  native?: unknown;
}

/** One entry of a vendor's own model list. */
export interface VendorModel {
  id: string;
  /** Unix seconds; 0 when the vendor does not say. */
  created: number;
}

/** The one interface each vendor implements; the router knows nothing vendor-specific beyond it. */
export interface VendorAdapter {
  readonly id: string;
  /** Base URL used when neither an override nor a connection endpoint is given; null: endpoint required. */
  readonly defaultBaseUrl: string | null;
  /** Response header that carries the vendor's request id. */
  readonly requestIdHeader: string;
  headers(apiKey: string): Record<string, string>;
  /** Headers a request adds to the vendor's own (Anthropic: a Messages request's `anthropic-beta`). */
  requestHeaders?(request: ChatRequest): Record<string, string> | undefined;
  /** Request path (with query, if any) appended to the base URL's path. */
  path(basePath: string, vendorModel: string): string;
  /**
   * The vendor's body for the request. Throws a 400 ApiError (`unsupported_parameter`,
   * `unsupported_content`) for what this vendor cannot honour; the router then tries the next one.
   */
  toVendor(request: ChatRequest, vendorModel: string): unknown;
  /** Throws ShapeError when the body is not what this vendor answers on success. */
  fromVendor(body: unknown, request: ChatRequest): VendorOutput;
  /** Pulls the vendor's message out of an error body; may reclassify (e.g. a dead key sent as 400). */
  errorInfo(status: number, body: unknown): { message?: string | undefined; kind?: VendorErrorKind | undefined };
  /** Streaming (`stream: true`): the body change and the event reader. */
  readonly stream?: StreamSupport;
  /** POST /v1/embeddings, for vendors whose API has embeddings (the catalog says which models). */
  readonly embeddings?: EmbeddingSupport;
  /** Counting a Messages request's input tokens without running it (Anthropic's count_tokens). */
  readonly countTokens?: TokenCounting;
  /** The vendor's model list (GET), when it offers one. */
  readonly models?: {
    path(basePath: string): string;
    parse(body: unknown): VendorModel[];
  };
}

export class ShapeError extends Error {
  override readonly name = 'ShapeError';
}

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A vendor's token count; absurd ones (negative, fractional, 1e300) are made storable here, once. */
export const count = storableCount;

/** A vendor's time in seconds since the epoch (a model's `created`): a whole number, else 0. */
export const epochSeconds = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : 0;

export function usageOf(prompt: unknown, completion: unknown, total?: unknown): Usage {
  const prompt_tokens = count(prompt);
  const completion_tokens = count(completion);
  const reported = count(total);
  return { prompt_tokens, completion_tokens, total_tokens: reported || prompt_tokens + completion_tokens };
}

/** Adds cached / reasoning token counts to a usage, only the ones the vendor reported. */
export function withDetails(usage: Usage, cached: unknown, reasoning: unknown): Usage {
  if (typeof cached === 'number') usage.prompt_tokens_details = { cached_tokens: count(cached) };
  if (typeof reasoning === 'number') usage.completion_tokens_details = { reasoning_tokens: count(reasoning) };
  return usage;
}

/** A choice with plain text (or tool calls), the shape every non-OpenAI vendor's answer becomes. */
export function textChoice(index: number, content: string | null, finish: FinishReason, toolCalls?: Choice['message']['tool_calls']): Choice {
  const message: Choice['message'] = { role: 'assistant', content, refusal: null };
  if (toolCalls && toolCalls.length > 0) message.tool_calls = toolCalls;
  return { index, message, logprobs: null, finish_reason: finish };
}

/** VendorOutput from its choices: content and finishReason are the first choice's. */
export function outputOf(choices: Choice[], usage: Usage, extra: Pick<VendorOutput, 'model' | 'systemFingerprint' | 'serviceTier'> = {}): VendorOutput {
  const first = choices[0];
  return {
    content: first?.message.content ?? '',
    finishReason: first?.finish_reason ?? 'stop',
    usage,
    choices,
    ...extra,
  };
}
