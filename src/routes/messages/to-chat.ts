// An Anthropic Messages request as the router's ChatRequest (OpenAI's shape), so that every
// vendor can serve it; the original body rides along (MESSAGES_ORIGIN) for Anthropic itself.
// What only Anthropic can take (server tools, images in tool results, URL documents) does not
// fail here: it makes the request Anthropic-only, and the other vendors are skipped.
import { invalidRequest, missingField } from '../../errors.js';
import { MESSAGES_ORIGIN, type MessagesOrigin } from '../../providers/messages/types.js';
import type { ChatRequest, ContentPart } from '../../providers/types.js';
import type { RequestMessage } from '../../schemas/chat-messages.js';
import type { MessagesRequest } from '../../schemas/messages.js';

type Block = Record<string, unknown> & { type: string };
type Message = MessagesRequest['messages'][number];

/** Thinking budget -> the effort other vendors take (the budgets src/providers/adapters/content.ts gives each effort). */
export function effortOf(budget: number): 'low' | 'medium' | 'high' {
  return budget <= 1024 ? 'low' : budget <= 8192 ? 'medium' : 'high';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

class Translation {
  anthropicOnly: string | null = null;
  readonly messages: RequestMessage[] = [];

  only(why: string): void {
    this.anthropicOnly ??= why;
  }

  /** A block's required string member; 400 naming it when absent. */
  text(block: Block, member: string, at: string): string {
    const value = block[member];
    if (typeof value !== 'string') throw (value === undefined ? missingField(`${at}.${member}`) : invalidRequest('invalid_value', `${at}.${member} must be a string.`, `${at}.${member}`));
    return value;
  }

  image(block: Block, at: string): ContentPart | null {
    const source = block.source;
    if (!isObject(source)) throw missingField(`${at}.source`);
    if (source.type === 'base64') return { type: 'image_url', image_url: { url: `data:${this.text(source as Block, 'media_type', `${at}.source`)};base64,${this.text(source as Block, 'data', `${at}.source`)}` } };
    if (source.type === 'url') return { type: 'image_url', image_url: { url: this.text(source as Block, 'url', `${at}.source`) } };
    this.only(`${at} is an image of source type ${String(source.type)}`);
    return null;
  }

  document(block: Block, at: string): ContentPart | null {
    const source = block.source;
    if (!isObject(source)) throw missingField(`${at}.source`);
    if (source.type === 'base64') return { type: 'file', file: { file_data: `data:${this.text(source as Block, 'media_type', `${at}.source`)};base64,${this.text(source as Block, 'data', `${at}.source`)}`, ...(typeof block.title === 'string' ? { filename: block.title } : {}) } };
    if (source.type === 'text') return { type: 'text', text: this.text(source as Block, 'data', `${at}.source`) };
    this.only(`${at} is a document of source type ${String(source.type)}`);
    return null;
  }

  user(message: Message, i: number): void {
    if (typeof message.content === 'string') {
      this.messages.push({ role: 'user', content: message.content });
      return;
    }
    let parts: ContentPart[] = [];
    const flush = () => {
      if (parts.length > 0) this.messages.push({ role: 'user', content: parts });
      parts = [];
    };
    for (const [j, block] of (message.content as Block[]).entries()) {
      const at = `messages[${i}].content[${j}]`;
      switch (block.type) {
        case 'text':
          parts.push({ type: 'text', text: this.text(block, 'text', at) });
          break;
        case 'image': {
          const part = this.image(block, at);
          if (part) parts.push(part);
          break;
        }
        case 'document': {
          const part = this.document(block, at);
          if (part) parts.push(part);
          break;
        }
        case 'tool_result':
          // OpenAI's tool messages follow the assistant's tool calls directly, before any user text.
          flush();
          this.messages.push({ role: 'tool', tool_call_id: this.text(block, 'tool_use_id', at), content: this.toolResult(block, at) });
          break;
        default:
          this.only(`${at} is a ${block.type} block`);
      }
    }
    flush();
  }

  toolResult(block: Block, at: string): string {
    const content = block.content;
    const prefix = block.is_error === true ? 'Error: ' : '';
    if (content === undefined) return prefix;
    if (typeof content === 'string') return prefix + content;
    if (!Array.isArray(content)) throw invalidRequest('invalid_value', `${at}.content must be a string or an array of blocks.`, `${at}.content`);
    const texts: string[] = [];
    for (const [k, inner] of content.entries()) {
      if (isObject(inner) && inner.type === 'text' && typeof inner.text === 'string') texts.push(inner.text);
      else this.only(`${at}.content[${k}] is not text (other vendors take text tool results only)`);
    }
    return prefix + texts.join('\n');
  }

  assistant(message: Message, i: number): void {
    if (typeof message.content === 'string') {
      this.messages.push({ role: 'assistant', content: message.content });
      return;
    }
    const texts: string[] = [];
    const calls: NonNullable<RequestMessage['tool_calls']> = [];
    for (const [j, block] of (message.content as Block[]).entries()) {
      const at = `messages[${i}].content[${j}]`;
      if (block.type === 'text') texts.push(this.text(block, 'text', at));
      else if (block.type === 'tool_use') {
        const input = block.input ?? {};
        if (!isObject(input)) throw invalidRequest('invalid_value', `${at}.input must be an object.`, `${at}.input`);
        calls.push({ id: this.text(block, 'id', at), type: 'function', function: { name: this.text(block, 'name', at), arguments: JSON.stringify(input) } });
      } else if (block.type !== 'thinking' && block.type !== 'redacted_thinking') this.only(`${at} is a ${block.type} block`);
      // Thinking blocks are Anthropic's own: they go to Anthropic in the original body, nowhere else.
    }
    const out: RequestMessage = { role: 'assistant', content: calls.length > 0 && texts.length === 0 ? null : texts.join('') };
    if (calls.length > 0) out.tool_calls = calls;
    this.messages.push(out);
  }
}

function thinkingEffort(thinking: MessagesRequest['thinking']): 'low' | 'medium' | 'high' | null {
  if (!thinking || thinking.type === 'disabled') return null;
  return thinking.type === 'enabled' ? effortOf(thinking.budget_tokens) : 'medium';
}

function systemText(system: MessagesRequest['system']): string | null {
  if (system === undefined) return null;
  if (typeof system === 'string') return system === '' ? null : system;
  return system.length > 0 ? system.map((b) => b.text).join('\n\n') : null;
}

/** The ChatRequest the router takes; `body` is carried for Anthropic, unchanged. */
export function toChatRequest(body: MessagesRequest, betas?: string): ChatRequest {
  const t = new Translation();
  const system = systemText(body.system);
  if (system !== null) t.messages.push({ role: 'system', content: system });
  for (const [i, message] of body.messages.entries()) {
    if (message.role === 'user') t.user(message, i);
    else t.assistant(message, i);
  }
  const request: ChatRequest = { model: body.model, messages: t.messages, max_tokens: body.max_tokens };
  if (body.stop_sequences !== undefined && body.stop_sequences.length > 0) request.stop = body.stop_sequences;
  if (body.temperature !== undefined) request.temperature = body.temperature;
  if (body.top_p !== undefined) request.top_p = body.top_p;
  if (typeof body.metadata?.user_id === 'string') request.user = body.metadata.user_id;
  const effort = body.output_config?.effort ?? thinkingEffort(body.thinking);
  if (effort) request.reasoning_effort = effort;
  const format = body.output_config?.format;
  if (format) request.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema, strict: true } };
  if (body.mcp_servers !== undefined && body.mcp_servers.length > 0) t.only('mcp_servers are Anthropic’s own');
  addTools(body, request, t);
  const { stream: _stream, ...original } = body;
  const origin: MessagesOrigin = { body: original, topK: body.top_k, betas, anthropicOnly: t.anthropicOnly };
  // A symbol key: copies of the request keep it, and no member check or JSON body ever sees it.
  return Object.assign(request, { [MESSAGES_ORIGIN]: origin });
}

function addTools(body: MessagesRequest, request: ChatRequest, t: Translation): void {
  const tools = body.tools ?? [];
  const functions: NonNullable<ChatRequest['tools']> = [];
  for (const [i, tool] of tools.entries()) {
    if (tool.type !== undefined && tool.type !== 'custom') {
      t.only(`tools[${i}] is Anthropic's server tool ${tool.type}`);
      continue;
    }
    if (!tool.input_schema) throw missingField(`tools[${i}].input_schema`);
    functions.push({ type: 'function', function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.input_schema } });
  }
  if (functions.length > 0) request.tools = functions;
  const choice = body.tool_choice;
  if (!choice) return;
  if (choice.type === 'tool') {
    if (!choice.name) throw missingField('tool_choice.name');
    request.tool_choice = { type: 'function', function: { name: choice.name } };
  } else request.tool_choice = choice.type === 'any' ? 'required' : choice.type;
  if (choice.disable_parallel_tool_use === true && choice.type !== 'none') request.parallel_tool_calls = false;
  // A tool choice without tools: what chat vendors refuse, Anthropic ignores.
  if (!request.tools) {
    delete request.tool_choice;
    delete request.parallel_tool_calls;
  }
}
