// Anthropic Messages API. OpenAI-style messages are rebuilt as Anthropic turns of content blocks;
// tool calls become tool_use / tool_result blocks, and a JSON response_format a forced tool.
import { anthropicStream } from './anthropic-stream.js';
import { messagesOrigin } from '../messages/types.js';
import type { RequestMessage } from '../../schemas/chat-messages.js';
import type { ChatRequest, Choice, FinishReason } from '../types.js';
import {
  THINKING_BUDGET, checkSupport, functionToolsOnly, isHttpUrl, parseArguments, parseDataUrl, partsOf, plainText, stopList,
  unsupportedContent, unsupportedParameter, type SupportTable,
} from './content.js';
import { ShapeError, count, isObject, outputOf, textChoice, usageOf, type Json, type VendorAdapter } from './types.js';

export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires max_tokens; this is sent when the caller gives none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;
/** The forced tool that carries a `json_object` answer (json_schema uses the schema's own name). */
export const JSON_OBJECT_TOOL = 'json_response';
const P = 'anthropic';

type Block = Json;
interface Turn { role: 'user' | 'assistant'; content: Block[] }

const FINISH: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

const wantsJson = (r: ChatRequest) => r.response_format !== undefined && r.response_format.type !== 'text';
const thinks = (r: ChatRequest) => r.reasoning_effort !== undefined && r.reasoning_effort !== 'none';

const SUPPORT: SupportTable = {
  audio: 'no',
  frequency_penalty: 'no',
  function_call: 'no',
  functions: 'no',
  logit_bias: 'no',
  logprobs: (r) => (r.logprobs ? 'returns no log probabilities' : null),
  max_completion_tokens: 'yes',
  max_tokens: 'yes',
  metadata: 'noop',
  modalities: (r) => (r.modalities?.includes('audio') ? 'answers in text only' : null),
  moderation: 'no',
  n: (r) => ((r.n ?? 1) > 1 ? 'returns one choice per request' : null),
  parallel_tool_calls: 'yes',
  prediction: 'no',
  presence_penalty: 'no',
  prompt_cache_key: 'noop',
  prompt_cache_options: 'noop',
  prompt_cache_retention: 'noop',
  reasoning_effort: 'yes',
  response_format: (r) =>
    !wantsJson(r) ? null
      : r.tools?.length ? 'cannot combine tools with a JSON response_format (which it answers through a forced tool)'
        : thinks(r) ? 'cannot combine reasoning_effort with a JSON response_format (a forced tool excludes thinking)' : null,
  safety_identifier: 'yes',
  seed: 'no',
  service_tier: 'noop',
  stop: 'yes',
  store: 'noop',
  temperature: (r) => ((r.temperature ?? 0) > 1 ? 'accepts a temperature from 0 to 1 only' : null),
  tool_choice: (r) => (typeof r.tool_choice === 'object' && r.tool_choice.type !== 'function' ? `has no tool_choice of type ${r.tool_choice.type}` : null),
  tools: functionToolsOnly,
  top_logprobs: (r) => ((r.top_logprobs ?? 0) > 0 ? 'returns no log probabilities' : null),
  top_p: 'yes',
  user: 'yes',
  verbosity: 'no',
  web_search_options: 'no',
};

function userBlocks(message: RequestMessage, i: number): Block[] {
  return partsOf(message.content).map((part, j): Block => {
    const param = `messages[${i}].content[${j}]`;
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text };
      case 'image_url': {
        const url = part.image_url.url;
        const data = parseDataUrl(url);
        if (data) return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data } };
        if (isHttpUrl(url)) return { type: 'image', source: { type: 'url', url } };
        throw unsupportedContent(P, param, 'image_url must be an http(s) URL or a base64 data URL.');
      }
      case 'file': {
        const data = part.file.file_data ? parseDataUrl(part.file.file_data) : null;
        if (data) return { type: 'document', source: { type: 'base64', media_type: data.mediaType, data: data.data } };
        throw unsupportedContent(P, param, 'a file part must carry file_data as a base64 data URL (OpenAI file ids mean nothing here).');
      }
      default:
        throw unsupportedContent(P, param, `${part.type} content parts are not accepted.`);
    }
  });
}

function assistantBlocks(message: RequestMessage, i: number): Block[] {
  const blocks: Block[] = partsOf(message.content).map((part, j): Block => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'refusal') return { type: 'text', text: part.refusal };
    throw unsupportedContent(P, `messages[${i}].content[${j}]`, `${part.type} content parts are not accepted in assistant messages.`);
  });
  for (const [j, call] of (message.tool_calls ?? []).entries()) {
    if (call.type !== 'function') throw unsupportedParameter(P, `messages[${i}].tool_calls[${j}]`, 'has function tool calls only');
    blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: parseArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`) });
  }
  return blocks;
}

/**
 * System and developer messages, wherever they stand, join the top-level `system` (Anthropic has
 * no such turn); tool results are user turns of tool_result blocks; consecutive same-role
 * messages become one turn whose blocks keep their order.
 */
export function toAnthropicBody(request: ChatRequest, vendorModel: string): Json {
  const origin = messagesOrigin(request);
  // A Messages request goes as it came: the model as routed, the output cap as admitted.
  if (origin) return { ...origin.body, model: vendorModel, max_tokens: request.max_tokens ?? origin.body.max_tokens };
  checkSupport(P, request, SUPPORT);
  const system: string[] = [];
  const turns: Turn[] = [];
  const push = (role: Turn['role'], blocks: Block[]) => {
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const [i, message] of request.messages.entries()) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(plainText(message.content, P, `messages[${i}].content`));
        break;
      case 'user':
        push('user', userBlocks(message, i));
        break;
      case 'assistant':
        push('assistant', assistantBlocks(message, i));
        break;
      case 'tool':
        push('user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: plainText(message.content, P, `messages[${i}].content`) }]);
        break;
      default:
        throw unsupportedParameter(P, `messages[${i}].role`, 'takes tool messages, not the deprecated function role');
    }
  }
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  const body: Json = {
    model: vendorModel,
    max_tokens: maxTokens,
    messages: turns.map((turn) =>
      // A lone text block is sent as a plain string, the form Anthropic documents for simple turns.
      turn.content.length === 1 && turn.content[0]!.type === 'text' ? { role: turn.role, content: turn.content[0]!.text } : turn,
    ),
  };
  if (system.length > 0) body.system = system.join('\n\n');
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.top_p !== undefined) body.top_p = request.top_p;
  if (request.stop !== undefined) body.stop_sequences = stopList(request.stop);
  const endUser = request.safety_identifier ?? request.user;
  if (endUser !== undefined) body.metadata = { user_id: endUser };
  if (thinks(request)) {
    // The budget comes on top of the caller's limit, so that the answer itself keeps it.
    const budget = THINKING_BUDGET[request.reasoning_effort!]!;
    body.thinking = { type: 'enabled', budget_tokens: budget };
    body.max_tokens = maxTokens + budget;
  }
  addTools(request, body);
  return body;
}

function addTools(request: ChatRequest, body: Json): void {
  const format = request.response_format;
  if (format && format.type !== 'text') {
    const name = format.type === 'json_schema' ? format.json_schema.name : JSON_OBJECT_TOOL;
    const schema = format.type === 'json_schema' ? format.json_schema.schema ?? { type: 'object' } : { type: 'object' };
    const description = format.type === 'json_schema' ? format.json_schema.description : undefined;
    body.tools = [{ name, ...(description ? { description } : {}), input_schema: schema }];
    body.tool_choice = { type: 'tool', name };
    return;
  }
  if (!request.tools || request.tools.length === 0) return;
  body.tools = request.tools.map((tool) => {
    const fn = tool.type === 'function' ? tool.function : null;
    return { name: fn!.name, ...(fn!.description ? { description: fn!.description } : {}), input_schema: fn!.parameters ?? { type: 'object', properties: {} } };
  });
  const choice = request.tool_choice;
  let toolChoice: Json | undefined;
  if (choice === 'none') toolChoice = { type: 'none' };
  else if (choice === 'required') toolChoice = { type: 'any' };
  else if (typeof choice === 'object' && choice.type === 'function') toolChoice = { type: 'tool', name: choice.function.name };
  else if (choice === 'auto' || request.parallel_tool_calls === false) toolChoice = { type: 'auto' };
  if (toolChoice && request.parallel_tool_calls === false && toolChoice.type !== 'none') toolChoice.disable_parallel_tool_use = true;
  if (toolChoice) body.tool_choice = toolChoice;
}

export const anthropicAdapter: VendorAdapter = {
  id: P,
  defaultBaseUrl: 'https://api.anthropic.com',
  requestIdHeader: 'request-id',
  headers: (apiKey) => ({
    'x-api-key': apiKey,
    'anthropic-version': ANTHROPIC_VERSION,
    'content-type': 'application/json',
  }),
  path: (basePath) => `${basePath}/v1/messages`,
  toVendor: toAnthropicBody,
  requestHeaders(request) {
    const betas = messagesOrigin(request)?.betas;
    return betas ? { 'anthropic-beta': betas } : undefined;
  },
  countTokens: {
    path: (basePath) => `${basePath}/v1/messages/count_tokens`,
    // The count_tokens request as it came (its schema keeps what count_tokens takes), with the model as routed.
    body: (request, vendorModel) => ({ ...request, model: vendorModel }),
    parse(body) {
      if (!isObject(body) || typeof body.input_tokens !== 'number') throw new ShapeError('no input_tokens');
      return count(body.input_tokens);
    },
  },
  stream: anthropicStream({ finish: FINISH, wantsJson }),
  fromVendor(body, request) {
    if (!isObject(body) || !Array.isArray(body.content)) throw new ShapeError('no content array');
    const native = messagesOrigin(request) ? body : undefined;
    const forced = wantsJson(request);
    let text = '';
    let json: string | null = null;
    const toolCalls: NonNullable<Choice['message']['tool_calls']> = [];
    for (const block of body.content) {
      if (!isObject(block)) continue;
      if (block.type === 'text' && typeof block.text === 'string') text += block.text;
      else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
        const args = JSON.stringify(block.input ?? {});
        if (forced) json = args;
        else toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: args } });
      }
    }
    const usage = isObject(body.usage) ? body.usage : {};
    const read = typeof usage.cache_read_input_tokens === 'number' ? usage.cache_read_input_tokens : 0;
    // Cached prompt tokens are billed apart but are still prompt tokens.
    const prompt = (typeof usage.input_tokens === 'number' ? usage.input_tokens : 0) +
      (typeof usage.cache_creation_input_tokens === 'number' ? usage.cache_creation_input_tokens : 0) + read;
    const totals = usageOf(prompt, usage.output_tokens);
    if (typeof usage.cache_read_input_tokens === 'number') totals.prompt_tokens_details = { cached_tokens: read };
    let finish = (typeof body.stop_reason === 'string' ? FINISH[body.stop_reason] : undefined) ?? 'stop';
    // A JSON response_format is answered by the forced tool: its input is the message content.
    if (forced && json !== null) {
      text = json;
      if (finish === 'tool_calls') finish = 'stop';
    }
    const content = toolCalls.length > 0 && text === '' ? null : text;
    const output = outputOf([textChoice(0, content, finish, toolCalls)], totals, { model: typeof body.model === 'string' ? body.model : undefined });
    if (native) output.native = native;
    return output;
  },
  errorInfo(_status, body) {
    const error = isObject(body) ? body.error : undefined;
    return { message: isObject(error) && typeof error.message === 'string' ? error.message : undefined };
  },
  models: {
    path: (basePath) => `${basePath}/v1/models?limit=1000`,
    parse(body) {
      if (!isObject(body) || !Array.isArray(body.data)) throw new ShapeError('no data array');
      return body.data.flatMap((m) => {
        if (!isObject(m) || typeof m.id !== 'string') return [];
        const at = typeof m.created_at === 'string' ? Date.parse(m.created_at) : NaN;
        return [{ id: m.id, created: Number.isNaN(at) ? 0 : Math.floor(at / 1000) }];
      });
    },
  },
};
