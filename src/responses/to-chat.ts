// A Responses request as the internal ChatRequest, so that it is routed like any chat
// completion (every vendor, through its chat adapter): instructions become the system message,
// items become chat messages, function tools and text.format their chat spellings.
import { invalidRequest } from '../errors.js';
import type { ChatRequest } from '../providers/types.js';
import type { ContentPartInput, RequestMessage, Tool, ToolChoice } from '../schemas/chat-messages.js';
import type { CreateResponse, InputPart, ResponseTool } from '../schemas/responses.js';
import type { Item } from './input.js';

/** `context`: the items of the previous responses (inputs and outputs, oldest first); `input`: this request's. */
export function toChatRequest(body: CreateResponse, context: Item[], input: Item[]): ChatRequest {
  if (body.background === true) throw invalidRequest('unsupported_parameter', 'background responses are not supported: omit `background` or set it to false.', 'background');
  const messages: RequestMessage[] = [];
  if (body.instructions) messages.push({ role: 'system', content: body.instructions });
  for (const item of context) addItem(messages, item);
  for (const item of input) addItem(messages, item);
  if (messages.length === 0) throw invalidRequest('missing_required_field', 'Missing required field: input.', 'input');
  const request: ChatRequest = { model: body.model, messages };
  if (body.tools && body.tools.length > 0) request.tools = body.tools.map(chatTool);
  if (body.tool_choice !== undefined) request.tool_choice = chatToolChoice(body.tool_choice);
  if (typeof body.parallel_tool_calls === 'boolean' && request.tools) request.parallel_tool_calls = body.parallel_tool_calls;
  const format = body.text?.format;
  if (format && format.type !== 'text') request.response_format = format.type === 'json_object' ? { type: 'json_object' } : jsonSchemaFormat(format);
  if (body.text?.verbosity) request.verbosity = body.text.verbosity;
  if (body.reasoning?.effort) request.reasoning_effort = body.reasoning.effort;
  // `max_tokens`: every chat vendor takes it, and OpenAI's adapter renames it for its reasoning models.
  if (typeof body.max_output_tokens === 'number') request.max_tokens = body.max_output_tokens;
  if (typeof body.temperature === 'number') request.temperature = body.temperature;
  if (typeof body.top_p === 'number') request.top_p = body.top_p;
  if (body.user !== undefined) request.user = body.user;
  if (body.safety_identifier) request.safety_identifier = body.safety_identifier;
  if (body.prompt_cache_key) request.prompt_cache_key = body.prompt_cache_key;
  if (body.service_tier) request.service_tier = body.service_tier;
  return request;
}

function addItem(messages: RequestMessage[], item: Item): void {
  switch (item.type) {
    case 'message':
      messages.push(chatMessage(item));
      return;
    case 'function_call': {
      const call = { id: String(item.call_id), type: 'function' as const, function: { name: String(item.name), arguments: String(item.arguments) } };
      // Parallel calls are one assistant turn in chat: a call right after an assistant turn joins it.
      const last = messages[messages.length - 1];
      if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      return;
    }
    case 'function_call_output':
      messages.push({ role: 'tool', tool_call_id: String(item.call_id), content: toolOutput(item.output as string | InputPart[], item.id) });
      return;
    default:
      // Reasoning items: no chat vendor takes them back.
      return;
  }
}

function chatMessage(item: Item): RequestMessage {
  const role = item.role as 'user' | 'assistant' | 'system' | 'developer';
  const parts = (item.content as InputPart[]).map(chatPart);
  if (role === 'assistant') return { role, content: parts.every((p) => p.type === 'text') ? parts.map((p) => (p.type === 'text' ? p.text : '')).join('') : parts };
  return { role, content: parts };
}

function chatPart(part: InputPart): ContentPartInput {
  switch (part.type) {
    case 'input_image':
      return { type: 'image_url', image_url: { url: part.image_url!, ...(part.detail && part.detail !== 'original' ? { detail: part.detail } : {}) } };
    case 'input_file':
      return { type: 'file', file: { file_data: part.file_data!, ...(part.filename ? { filename: part.filename } : {}) } };
    case 'refusal':
      return { type: 'refusal', refusal: part.refusal! };
    default:
      return { type: 'text', text: part.text! };
  }
}

/** A chat tool message carries text only: an image in a tool's output has no chat spelling. */
function toolOutput(output: string | InputPart[], id: string): string {
  if (typeof output === 'string') return output;
  return output.map((part) => {
    if (part.type !== 'input_text') throw invalidRequest('unsupported_content', `function_call_output ${id} carries an ${part.type} part; only text outputs can be sent to a model here.`, 'input');
    return part.text!;
  }).join('');
}

function chatTool(tool: ResponseTool, i: number): Tool {
  if (tool.type !== 'function') {
    throw invalidRequest(
      'unsupported_parameter',
      `tools[${i}] is the built-in tool "${tool.type}", which is not supported: only function tools ({type: "function", name, parameters}) are.`,
      `tools[${i}]`,
    );
  }
  if (tool.name === undefined) throw invalidRequest('missing_required_field', `Missing required field: tools[${i}].name.`, `tools[${i}].name`);
  for (const key of Object.keys(tool)) {
    if (!['type', 'name', 'description', 'parameters', 'strict'].includes(key)) {
      throw invalidRequest('unknown_parameter', `tools[${i}].${key} is not a member of a function tool.`, `tools[${i}].${key}`);
    }
  }
  const fn: Extract<Tool, { type: 'function' }>['function'] = { name: tool.name };
  if (tool.description) fn.description = tool.description;
  if (tool.parameters) fn.parameters = tool.parameters;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function chatToolChoice(choice: NonNullable<CreateResponse['tool_choice']>): ToolChoice {
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function') {
    if (!choice.name) throw invalidRequest('missing_required_field', 'Missing required field: tool_choice.name.', 'tool_choice.name');
    return { type: 'function', function: { name: choice.name } };
  }
  if (choice.type === 'allowed_tools') {
    const tools = (choice.tools ?? []).map((t) => ({ type: 'function', function: { name: (t as { name?: unknown }).name } }));
    return { type: 'allowed_tools', allowed_tools: { mode: choice.mode ?? 'auto', tools } };
  }
  throw invalidRequest('unsupported_parameter', `tool_choice of type "${choice.type}" is not supported: only "none", "auto", "required", a function or allowed_tools.`, 'tool_choice');
}

function jsonSchemaFormat(format: NonNullable<NonNullable<CreateResponse['text']>['format']>): NonNullable<ChatRequest['response_format']> {
  if (!format.name) throw invalidRequest('missing_required_field', 'Missing required field: text.format.name.', 'text.format.name');
  if (!format.schema) throw invalidRequest('missing_required_field', 'Missing required field: text.format.schema.', 'text.format.schema');
  const json: { name: string; schema: Record<string, unknown>; description?: string; strict?: boolean | null } = { name: format.name, schema: format.schema };
  if (format.description) json.description = format.description;
  if (format.strict !== undefined) json.strict = format.strict;
  return { type: 'json_schema', json_schema: json };
}
