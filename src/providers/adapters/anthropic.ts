// Anthropic Messages API. OpenAI-style messages are rebuilt as Anthropic turns of content blocks.
import type { ChatMessage, ChatRequest, FinishReason } from '../types.js';
import { isHttpUrl, parseDataUrl, partsOf, systemText, unsupportedImage } from './content.js';
import { ShapeError, isObject, usageOf, type Json, type VendorAdapter } from './types.js';

export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires max_tokens; this is sent when the caller gives none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

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

function blocksOf(message: ChatMessage): Block[] {
  return partsOf(message.content).map((part): Block => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    const url = part.image_url.url;
    const data = parseDataUrl(url);
    if (data) return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data } };
    if (isHttpUrl(url)) return { type: 'image', source: { type: 'url', url } };
    throw unsupportedImage('anthropic', 'image_url must be an http(s) URL or a base64 data URL.');
  });
}

/**
 * Every system message, wherever it stands, joins the top-level `system` (Anthropic has no system
 * turn); consecutive same-role messages become one turn whose blocks keep their order.
 */
export function toAnthropicBody(request: ChatRequest, vendorModel: string): Json {
  const system: string[] = [];
  const turns: Turn[] = [];
  for (const message of request.messages) {
    if (message.role === 'system') {
      system.push(systemText(message, 'anthropic'));
      continue;
    }
    const last = turns[turns.length - 1];
    if (last && last.role === message.role) last.content.push(...blocksOf(message));
    else turns.push({ role: message.role, content: blocksOf(message) });
  }
  const body: Json = {
    model: vendorModel,
    max_tokens: request.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    messages: turns.map((turn) =>
      // A lone text block is sent as a plain string, the form Anthropic documents for simple turns.
      turn.content.length === 1 && turn.content[0]!.type === 'text'
        ? { role: turn.role, content: turn.content[0]!.text }
        : turn,
    ),
  };
  if (system.length > 0) body.system = system.join('\n\n');
  if (request.temperature !== undefined) body.temperature = request.temperature;
  return body;
}

export const anthropicAdapter: VendorAdapter = {
  id: 'anthropic',
  defaultBaseUrl: 'https://api.anthropic.com',
  requestIdHeader: 'request-id',
  headers: (apiKey) => ({
    'x-api-key': apiKey,
    'anthropic-version': ANTHROPIC_VERSION,
    'content-type': 'application/json',
  }),
  path: (basePath) => `${basePath}/v1/messages`,
  toVendor: toAnthropicBody,
  fromVendor(body) {
    if (!isObject(body) || !Array.isArray(body.content)) throw new ShapeError('no content array');
    let content = '';
    for (const block of body.content) if (isObject(block) && block.type === 'text' && typeof block.text === 'string') content += block.text;
    const usage = isObject(body.usage) ? body.usage : {};
    // Cached prompt tokens are billed apart but are still prompt tokens.
    const prompt =
      (typeof usage.input_tokens === 'number' ? usage.input_tokens : 0) +
      (typeof usage.cache_creation_input_tokens === 'number' ? usage.cache_creation_input_tokens : 0) +
      (typeof usage.cache_read_input_tokens === 'number' ? usage.cache_read_input_tokens : 0);
    const reason = typeof body.stop_reason === 'string' ? FINISH[body.stop_reason] : undefined;
    return { content, finishReason: reason ?? 'stop', usage: usageOf(prompt, usage.output_tokens) };
  },
  errorInfo(_status, body) {
    const error = isObject(body) ? body.error : undefined;
    return { message: isObject(error) && typeof error.message === 'string' ? error.message : undefined };
  },
};
