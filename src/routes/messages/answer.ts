// A routed chat result as Anthropic's Message: content blocks (text, tool_use), stop_reason and
// usage. Anthropic's own answer (a Messages request routed to Anthropic) is passed on as it came.
import { randomUUID } from 'node:crypto';
import type { ChatResult, FinishReason, Usage } from '../../providers/types.js';
import type { MessageAnswer } from '../../schemas/messages.js';

export const STOP_REASON: Record<FinishReason, MessageAnswer['stop_reason']> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

/** `msg_` and 32 hex digits, Anthropic's form of a message id. */
export const messageId = () => `msg_${randomUUID().replace(/-/g, '')}`;

/** Anthropic counts cached prompt tokens apart from input_tokens. */
export function anthropicUsage(usage: Usage): MessageAnswer['usage'] {
  const cached = Math.min(usage.prompt_tokens, usage.prompt_tokens_details?.cached_tokens ?? 0);
  return { input_tokens: usage.prompt_tokens - cached, output_tokens: usage.completion_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: cached };
}

/** A tool call's argument string as tool_use input; a vendor's broken JSON is kept under `_raw` rather than lost. */
export function toolInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text || '{}');
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // falls through
  }
  return { _raw: text };
}

/** `model`: as the caller asked (the vendor's exact model is in the x-ladder-model header). */
export function messageAnswer(model: string, result: ChatResult): MessageAnswer {
  if (result.native !== undefined) return result.native as MessageAnswer;
  const message = result.choices?.[0]?.message;
  const text = message ? message.content ?? '' : result.content;
  const content: Array<{ type: string; [member: string]: unknown }> = [];
  if (text !== '') content.push({ type: 'text', text });
  for (const call of message?.tool_calls ?? []) {
    if (call.type === 'function') content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments) });
  }
  return {
    id: messageId(),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: STOP_REASON[result.finishReason],
    stop_sequence: null,
    usage: anthropicUsage(result.usage),
  };
}
