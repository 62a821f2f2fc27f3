// The OpenAI chat completions wire format, shared by every OpenAI-compatible vendor, Azure and custom endpoints.
import type { ChatRequest, FinishReason } from '../types.js';
import { ShapeError, isObject, usageOf, type VendorAdapter, type VendorOutput } from './types.js';

export interface OpenAICompatibleSpec {
  id: string;
  defaultBaseUrl: string | null;
  /** Defaults to Bearer auth. */
  headers?: (apiKey: string) => Record<string, string>;
  /** Defaults to `{base}/chat/completions`. */
  path?: (basePath: string, vendorModel: string) => string;
  /** Azure names the deployment in the URL, so the body carries no model. */
  modelInBody?: boolean;
  /** Which body field carries max_tokens for this model (OpenAI's reasoning models refuse `max_tokens`). */
  maxTokensField?: (vendorModel: string) => 'max_tokens' | 'max_completion_tokens';
  requestIdHeader?: string;
}

const FINISH: Record<string, FinishReason> = {
  stop: 'stop',
  length: 'length',
  content_filter: 'content_filter',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
};

const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' });
const chatPath = (basePath: string) => `${basePath}/chat/completions`;

export function openAICompatible(spec: OpenAICompatibleSpec): VendorAdapter {
  const modelInBody = spec.modelInBody ?? true;
  const maxTokensField = spec.maxTokensField;
  return {
    id: spec.id,
    defaultBaseUrl: spec.defaultBaseUrl,
    requestIdHeader: spec.requestIdHeader ?? 'x-request-id',
    headers: spec.headers ?? bearer,
    path: spec.path ?? chatPath,
    toVendor(request: ChatRequest, vendorModel: string) {
      // Messages are already in this wire format: passed by reference, not copied.
      const body: Record<string, unknown> = modelInBody
        ? { model: vendorModel, messages: request.messages }
        : { messages: request.messages };
      if (request.temperature !== undefined) body.temperature = request.temperature;
      if (request.max_tokens !== undefined) {
        body[maxTokensField ? maxTokensField(vendorModel) : 'max_tokens'] = request.max_tokens;
      }
      return body;
    },
    fromVendor: parseChatCompletion,
    errorInfo: (_status, body) => ({ message: openAIErrorMessage(body) }),
  };
}

export function parseChatCompletion(body: unknown): VendorOutput {
  if (!isObject(body) || !Array.isArray(body.choices)) throw new ShapeError('no choices array');
  const choice: unknown = body.choices[0];
  if (!isObject(choice) || !isObject(choice.message)) throw new ShapeError('no choices[0].message');
  const usage = isObject(body.usage) ? body.usage : {};
  const reason = typeof choice.finish_reason === 'string' ? FINISH[choice.finish_reason] : undefined;
  return {
    content: messageText(choice.message.content),
    // Self-hosted servers sometimes send null or their own words for a normal end.
    finishReason: reason ?? 'stop',
    usage: usageOf(usage.prompt_tokens, usage.completion_tokens, usage.total_tokens),
  };
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  // Some compatible vendors (Mistral's reasoning models) answer with an array of chunks.
  if (Array.isArray(content)) {
    let text = '';
    for (const chunk of content) if (isObject(chunk) && chunk.type === 'text' && typeof chunk.text === 'string') text += chunk.text;
    return text;
  }
  throw new ShapeError('message content is neither text nor chunks');
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
