// Pieces of OpenAI's wire format that both its whole answers and its streams use.
import type { FinishReason, Usage } from '../types.js';
import { count, isObject, usageOf, type Json } from './types.js';

export const FINISH: Record<string, FinishReason> = {
  stop: 'stop',
  length: 'length',
  content_filter: 'content_filter',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
};

/** OpenAI's usage object, normalised; cached and reasoning token details kept where reported. */
export function parseOpenAIUsage(usage: Json): Usage {
  const out = usageOf(usage.prompt_tokens, usage.completion_tokens, usage.total_tokens);
  if (isObject(usage.prompt_tokens_details)) out.prompt_tokens_details = counts(usage.prompt_tokens_details, ['cached_tokens', 'audio_tokens']);
  if (isObject(usage.completion_tokens_details)) {
    out.completion_tokens_details = counts(usage.completion_tokens_details, ['reasoning_tokens', 'audio_tokens', 'accepted_prediction_tokens', 'rejected_prediction_tokens']);
  }
  return out;
}

function counts<K extends string>(source: Json, keys: K[]): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const key of keys) if (typeof source[key] === 'number') out[key] = count(source[key]);
  return out;
}

export function openAIErrorMessage(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const error = body.error;
  if (isObject(error) && typeof error.message === 'string') return error.message;
  if (typeof error === 'string') return error;
  if (typeof body.message === 'string') return body.message;
  if (typeof body.detail === 'string') return body.detail;
  return undefined;
}
