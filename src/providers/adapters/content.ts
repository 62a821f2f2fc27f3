// Helpers shared by the adapters that must rebuild an OpenAI request in another vendor's shape.
import { type ApiError, invalidRequest } from '../../errors.js';
import type { RequestMessage } from '../../schemas/chat-messages.js';
import type { ChatRequest, ContentPart } from '../types.js';
import { isObject, type Json } from './types.js';

export interface DataUrl {
  mediaType: string;
  data: string;
}

/** Splits `data:<type>;base64,<data>`; null for anything else (only base64 data URLs are inline media here). */
export function parseDataUrl(url: string): DataUrl | null {
  if (!url.startsWith('data:')) return null;
  const comma = url.indexOf(',');
  if (comma < 0) return null;
  const meta = url.slice(5, comma);
  if (!meta.endsWith(';base64')) return null;
  const mediaType = meta.slice(0, meta.indexOf(';'));
  return mediaType ? { mediaType, data: url.slice(comma + 1) } : null;
}

export function isHttpUrl(url: string): boolean {
  return url.startsWith('https://') || url.startsWith('http://');
}

export function partsOf(content: RequestMessage['content']): ContentPart[] {
  if (content === null || content === undefined) return [];
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

export function unsupportedContent(provider: string, param: string, why: string): ApiError {
  return invalidRequest('unsupported_content', `${provider}: ${why}`, param);
}

/** A request member this vendor has no equivalent for: the caller's 400 unless another candidate can honour it. */
export function unsupportedParameter(provider: string, param: string, why = 'has no equivalent'): ApiError {
  return invalidRequest(
    'unsupported_parameter',
    `${provider} cannot honour \`${param}\`: it ${why}. Omit it, or choose a model served by a provider that supports it.`,
    param,
  );
}

/** A tool call's argument string as the object the vendor wants; not a JSON object is the caller's fault. */
export function parseArguments(text: string, param: string): Json {
  try {
    const value: unknown = JSON.parse(text || '{}');
    if (isObject(value)) return value;
  } catch {
    // falls through
  }
  throw invalidRequest('invalid_value', `${param} must be a JSON object in a string.`, param);
}

/** The text of text-only content (system, developer, tool messages); null content is ''. */
export function plainText(content: RequestMessage['content'], provider: string, param: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part, i) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'refusal') return part.refusal;
      throw unsupportedContent(provider, `${param}[${i}]`, `${param}[${i}] must be a text part here (${part.type} is not accepted in this role).`);
    })
    .join('\n');
}

export const stopList = (stop: string | string[]): string[] => (typeof stop === 'string' ? [stop] : stop);

/**
 * How a vendor takes each request member: `yes` (translated), `noop` (no effect on the answer,
 * documented), `no` (400 unless another candidate can), or a check that returns why not.
 */
export type Support = 'yes' | 'noop' | 'no' | ((request: ChatRequest) => string | null);
export type SupportTable = Record<Exclude<keyof ChatRequest, 'model' | 'messages'>, Support>;

/** Throws unsupported_parameter for the first member (in the request's order) the vendor cannot honour. */
export function checkSupport(provider: string, request: ChatRequest, table: SupportTable): void {
  for (const key in request) {
    if (key === 'model' || key === 'messages') continue;
    const support = table[key as keyof SupportTable] ?? 'no';
    if (support === 'yes' || support === 'noop') continue;
    if (support === 'no') throw unsupportedParameter(provider, key);
    const why = support(request);
    if (why !== null) throw unsupportedParameter(provider, key, why);
  }
}

/** Function tools only: custom (free-form) tools exist at OpenAI alone. */
export function functionToolsOnly(request: ChatRequest): string | null {
  return request.tools?.some((t) => t.type !== 'function') ? 'has function tools only, no custom tools' : null;
}

/** The name of the tool each earlier tool call id belongs to, for vendors that answer by name. */
export function toolNamesById(messages: RequestMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) {
    for (const call of m.tool_calls ?? []) names.set(call.id, call.type === 'function' ? call.function.name : call.custom.name);
  }
  return names;
}

/** Effort -> thinking token budget, where a vendor takes a budget (Gemini's own OpenAI layer uses these). */
export const THINKING_BUDGET: Record<string, number> = { minimal: 1024, low: 1024, medium: 8192, high: 24576, xhigh: 32768, max: 32768 };
