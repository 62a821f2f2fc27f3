// What the router and the adapters exchange for embeddings, apart from chat's vocabulary.
import type { EmbeddingRequest } from '../../schemas/embeddings.js';

export type { EmbeddingRequest };

export interface EmbeddingUsage {
  prompt_tokens: number;
  total_tokens: number;
}

/** What an adapter reads from a vendor's embeddings answer. */
export interface EmbeddingOutput {
  /** One per input, in input order: numbers, or base64 float32 when the vendor was asked for it. */
  vectors: Array<number[] | string>;
  usage: EmbeddingUsage;
  model?: string | undefined;
}

/** An adapter's embeddings: where to send, what, and how to read the answer. */
export interface EmbeddingSupport {
  path(basePath: string, vendorModel: string): string;
  /** Throws a 400 ApiError (unsupported_parameter / unsupported_content) for what this vendor cannot take: the router skips it. */
  body(request: EmbeddingRequest, vendorModel: string): Record<string, unknown>;
  /** Throws ShapeError when the body is not this vendor's answer. */
  parse(body: unknown, request: EmbeddingRequest): EmbeddingOutput;
}

/** The inputs as a list: one string or one token array is a list of one. */
export function inputsOf(request: EmbeddingRequest): Array<string | number[]> {
  const input = request.input;
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as Array<string | number[]>;
}

/** Token count estimate where a vendor reports none: characters / 4 per text, the length of a token array. */
export function estimateEmbeddingTokens(request: EmbeddingRequest): number {
  let tokens = 0;
  for (const one of inputsOf(request)) tokens += typeof one === 'string' ? Math.ceil(one.length / 4) : one.length;
  return tokens;
}
