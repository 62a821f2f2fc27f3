/**
 * The streaming side of the fake vendors (test/fakes/vendors.ts): each vendor's real event
 * stream for an answer. OpenAI-compatible and Azure: `data: <chat.completion.chunk>` events and
 * `data: [DONE]`; Anthropic: the Messages stream's named events; Gemini:
 * `streamGenerateContent?alt=sse` responses with cumulative usageMetadata and no end marker.
 * Text is cut into pieces of PIECE characters, one event each.
 */
import type { FakeToolCall } from './vendors.js';

export interface StreamReply {
  content: string;
  finish: string | undefined;
  calls?: FakeToolCall[] | undefined;
  prompt: number;
  completion: number;
}

const PIECE = 4;

export function pieces(text: string, size = PIECE): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

/** OpenAI's chunks: role first, content pieces, tool call pieces, the finish, usage when asked, [DONE]. */
export function openAIStreamEvents(reply: StreamReply, model: string, n: number, body: any): string[] {
  const includeUsage = body?.stream_options?.include_usage === true;
  const choices = body?.n ?? 1;
  const base = { id: `chatcmpl-fake-${n}`, object: 'chat.completion.chunk', created: 1_700_000_000 + n, model, system_fingerprint: 'fp_fake' };
  const chunk = (index: number, delta: unknown, finish: string | null = null) =>
    sse({ ...base, choices: [{ index, delta, logprobs: null, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}) });
  const events: string[] = [];
  for (let index = 0; index < choices; index++) {
    events.push(chunk(index, { role: 'assistant', content: '', refusal: null }));
    for (const piece of pieces(reply.content)) events.push(chunk(index, { content: piece }));
    (reply.calls ?? []).forEach((call, i) => {
      events.push(chunk(index, { tool_calls: [{ index: i, id: call.id ?? `call_fake_${n}_${i}`, type: 'function', function: { name: call.name, arguments: '' } }] }));
      for (const piece of pieces(JSON.stringify(call.arguments), 7)) events.push(chunk(index, { tool_calls: [{ index: i, function: { arguments: piece } }] }));
    });
    events.push(chunk(index, {}, reply.finish ?? (reply.calls ? 'tool_calls' : 'stop')));
  }
  if (includeUsage) {
    events.push(sse({ ...base, choices: [], usage: { prompt_tokens: reply.prompt, completion_tokens: reply.completion, total_tokens: reply.prompt + reply.completion, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } } }));
  }
  events.push(sse('[DONE]'));
  return events;
}

export const openAIStreamError = (message: string) => sse({ error: { message, type: 'server_error', param: null, code: null } });

/** Anthropic's Messages stream, with a ping, as the API sends it. */
export function anthropicStreamEvents(reply: StreamReply, model: string, n: number): string[] {
  const events = [
    sse({ type: 'message_start', message: { id: `msg_fake_${n}`, type: 'message', role: 'assistant', content: [], model, stop_reason: null, stop_sequence: null, usage: { input_tokens: reply.prompt, output_tokens: 1 } } }, 'message_start'),
  ];
  let index = 0;
  if (reply.content || !reply.calls) {
    events.push(sse({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }, 'content_block_start'));
    events.push(sse({ type: 'ping' }, 'ping'));
    for (const piece of pieces(reply.content)) events.push(sse({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }, 'content_block_delta'));
    events.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'));
    index++;
  }
  (reply.calls ?? []).forEach((call, i) => {
    events.push(sse({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id ?? `toolu_fake_${n}_${i}`, name: call.name, input: {} } }, 'content_block_start'));
    for (const piece of pieces(JSON.stringify(call.arguments), 7)) events.push(sse({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }, 'content_block_delta'));
    events.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'));
    index++;
  });
  const stop = reply.finish ?? (reply.calls ? 'tool_use' : 'end_turn');
  events.push(sse({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: reply.completion } }, 'message_delta'));
  events.push(sse({ type: 'message_stop' }, 'message_stop'));
  return events;
}

export const anthropicStreamError = (message: string) => sse({ type: 'error', error: { type: 'overloaded_error', message } }, 'error');

/** Gemini's SSE responses: text pieces, whole functionCall parts, the finishReason on the last, cumulative usage. */
export function geminiStreamEvents(reply: StreamReply, model: string, n: number, body: any): string[] {
  const candidates = body?.generationConfig?.candidateCount ?? 1;
  const texts = pieces(reply.content);
  const parts: unknown[][] = texts.map((text) => [{ text }]);
  if (reply.calls) parts.push(reply.calls.map((c) => ({ functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: c.arguments } })));
  if (parts.length === 0) parts.push([{ text: '' }]);
  return parts.map((p, i) => {
    const last = i === parts.length - 1;
    const completion = Math.round((reply.completion * (i + 1)) / parts.length);
    return sse({
      candidates: Array.from({ length: candidates }, (_, index) => ({ content: { parts: p, role: 'model' }, ...(last ? { finishReason: reply.finish ?? 'STOP' } : {}), index })),
      usageMetadata: { promptTokenCount: reply.prompt, candidatesTokenCount: completion, totalTokenCount: reply.prompt + completion },
      modelVersion: model,
      responseId: `resp_fake_${n}`,
    });
  });
}

export const geminiStreamError = (message: string) => sse({ error: { code: 500, message, status: 'INTERNAL' } });
