// The answer in the Responses shape: the chat answer's text, refusal and tool calls become
// output items, its finish reason the status, its usage the Responses usage.
import type { FinishReason, Usage } from '../providers/types.js';
import type { Choice } from '../schemas/chat.js';
import type { CreateResponse, ResponseObject, ResponseUsage } from '../schemas/responses.js';
import { itemId } from './ids.js';
import type { Item } from './input.js';

export interface ResponseMeta {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  body: CreateResponse;
}

/** The response object before any output: what response.created shows, and the frame of the final one. */
export function responseShell(meta: ResponseMeta): ResponseObject {
  const { body } = meta;
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    completed_at: null,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model: body.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? body.reasoning?.generate_summary ?? null },
    service_tier: body.service_tier ?? null,
    store: body.store ?? true,
    temperature: body.temperature ?? null,
    text: { format: body.text?.format ?? { type: 'text' }, verbosity: body.text?.verbosity ?? null },
    tool_choice: body.tool_choice ?? 'auto',
    tools: (body.tools ?? []).map((t) => ({ type: t.type, name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? null })),
    top_p: body.top_p ?? null,
    truncation: body.truncation ?? 'disabled',
    usage: null,
    user: body.user ?? null,
  };
}

/** The status a finish reason gives, and why an incomplete answer stopped (OpenAI's reasons). */
export function statusOf(finish: FinishReason | null): Pick<ResponseObject, 'status' | 'incomplete_details'> {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export function responseUsage(usage: Usage): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

export const outputText = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });

/** The output items of one chat choice: a message (when it has text or a refusal), then each function call. */
export function outputItems(choice: Choice): Item[] {
  const { message } = choice;
  const items: Item[] = [];
  const content: Record<string, unknown>[] = [];
  if (message.content !== null && (message.content !== '' || (!message.tool_calls?.length && message.refusal === null))) content.push(outputText(message.content));
  if (message.refusal !== null) content.push({ type: 'refusal', refusal: message.refusal });
  const incomplete = choice.finish_reason === 'length';
  if (content.length > 0) items.push({ id: itemId('msg'), type: 'message', status: incomplete ? 'incomplete' : 'completed', role: 'assistant', content });
  for (const call of message.tool_calls ?? []) {
    const fn = call.type === 'function' ? call.function : { name: call.custom.name, arguments: call.custom.input };
    items.push({ id: itemId('fc'), type: 'function_call', status: 'completed', call_id: call.id, name: fn.name, arguments: fn.arguments });
  }
  return items;
}

/** The finished response: the shell with its output, status, usage and completion time. */
export function finishedResponse(meta: ResponseMeta, output: Item[], finish: FinishReason | null, usage: Usage, completedAt: number): ResponseObject {
  return Object.assign(responseShell(meta), statusOf(finish), { output, usage: responseUsage(usage), completed_at: completedAt });
}
