import type { ChatRequest, FinishReason, Usage } from '../types.js';
import type { VendorErrorKind } from '../vendor-errors.js';

/** What every adapter extracts from a successful vendor body. */
export interface VendorOutput {
  content: string;
  finishReason: FinishReason;
  usage: Usage;
}

/** The one interface each vendor implements; the router knows nothing vendor-specific beyond it. */
export interface VendorAdapter {
  readonly id: string;
  /** Base URL used when neither an override nor a connection endpoint is given; null: endpoint required. */
  readonly defaultBaseUrl: string | null;
  /** Response header that carries the vendor's request id. */
  readonly requestIdHeader: string;
  headers(apiKey: string): Record<string, string>;
  /** Request path (with query, if any) appended to the base URL's path. */
  path(basePath: string, vendorModel: string): string;
  toVendor(request: ChatRequest, vendorModel: string): unknown;
  /** Throws ShapeError when the body is not what this vendor answers on success. */
  fromVendor(body: unknown): VendorOutput;
  /** Pulls the vendor's message out of an error body; may reclassify (e.g. a dead key sent as 400). */
  errorInfo(status: number, body: unknown): { message?: string | undefined; kind?: VendorErrorKind | undefined };
}

export class ShapeError extends Error {
  override readonly name = 'ShapeError';
}

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : 0;

export function usageOf(prompt: unknown, completion: unknown, total?: unknown): Usage {
  const prompt_tokens = count(prompt);
  const completion_tokens = count(completion);
  const reported = count(total);
  return { prompt_tokens, completion_tokens, total_tokens: reported || prompt_tokens + completion_tokens };
}
