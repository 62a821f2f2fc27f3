// The OpenAI chat completions wire format, shared by every OpenAI-compatible vendor, Azure and custom endpoints.
import type { ChatRequest, Choice } from '../types.js';
import { ShapeError, epochSeconds, isObject, outputOf, type Json, type VendorAdapter, type VendorModel, type VendorOutput } from './types.js';
import { FINISH, openAIErrorMessage, parseOpenAIUsage } from './openai-wire.js';
import { openAIStream } from './openai-stream.js';
import { checkOrigin } from '../messages/origin.js';
import { openAIEmbeddings, type OpenAIEmbeddingsSpec } from '../embeddings/openai-embeddings.js';

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
  /** `GET {base}/models` in OpenAI's list shape; false for vendors without one. Default true. */
  modelList?: boolean;
  /** Send `stream_options.include_usage` on streams; false for vendors that refuse members they do not know. Default true. */
  streamUsageOption?: boolean;
  /** The vendor's embeddings endpoint and what it takes of OpenAI's request; absent: it has none. */
  embeddings?: OpenAIEmbeddingsSpec;
}


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
      checkOrigin(spec.id, request, false);
      // Already this wire format: every member goes on unchanged (messages by reference, not copied).
      const body: Json = { ...request };
      if (modelInBody) body.model = vendorModel;
      else delete body.model;
      if (maxTokensField && request.max_tokens !== undefined && request.max_completion_tokens === undefined && maxTokensField(vendorModel) === 'max_completion_tokens') {
        delete body.max_tokens;
        body.max_completion_tokens = request.max_tokens;
      }
      return body;
    },
    fromVendor: parseChatCompletion,
    stream: openAIStream(spec.streamUsageOption ?? true),
    errorInfo: (_status, body) => ({ message: openAIErrorMessage(body) }),
    ...(spec.embeddings ? { embeddings: openAIEmbeddings(spec.id, spec.embeddings) } : {}),
    ...(spec.modelList === false ? {} : { models: { path: (basePath: string) => `${basePath}/models`, parse: parseModelList } }),
  };
}

export function parseChatCompletion(body: unknown): VendorOutput {
  if (!isObject(body) || !Array.isArray(body.choices)) throw new ShapeError('no choices array');
  if (body.choices.length === 0) throw new ShapeError('no choices[0].message');
  const choices = body.choices.map(parseChoice);
  return outputOf(choices, parseOpenAIUsage(isObject(body.usage) ? body.usage : {}), {
    model: typeof body.model === 'string' ? body.model : undefined,
    systemFingerprint: typeof body.system_fingerprint === 'string' ? body.system_fingerprint : undefined,
    serviceTier: typeof body.service_tier === 'string' ? body.service_tier : undefined,
  });
}

function parseChoice(choice: unknown, position: number): Choice {
  if (!isObject(choice) || !isObject(choice.message)) throw new ShapeError(`no choices[${position}].message`);
  const m = choice.message;
  const message: Choice['message'] = {
    role: 'assistant',
    // Null stays null beside tool calls or a refusal, as OpenAI sends it; otherwise it is ''.
    content: m.content === null || m.content === undefined ? (Array.isArray(m.tool_calls) || typeof m.refusal === 'string' ? null : '') : messageText(m.content),
    refusal: typeof m.refusal === 'string' ? m.refusal : null,
  };
  // Tool calls, annotations and audio are passed on exactly as produced: ids are never rewritten.
  if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) message.tool_calls = m.tool_calls as Choice['message']['tool_calls'];
  if (isObject(m.function_call)) message.function_call = m.function_call as Choice['message']['function_call'];
  if (Array.isArray(m.annotations) && m.annotations.length > 0) message.annotations = m.annotations as Json[];
  if (isObject(m.audio)) message.audio = m.audio;
  const reason = typeof choice.finish_reason === 'string' ? FINISH[choice.finish_reason] : undefined;
  return {
    index: typeof choice.index === 'number' ? choice.index : position,
    message,
    logprobs: isObject(choice.logprobs) ? (choice.logprobs as Choice['logprobs']) : null,
    // Self-hosted servers sometimes send null or their own words for a normal end.
    finish_reason: reason ?? (message.tool_calls ? 'tool_calls' : 'stop'),
  };
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  // Some compatible vendors (Mistral's reasoning models) answer with an array of chunks.
  if (Array.isArray(content)) {
    let text = '';
    for (const chunk of content) if (isObject(chunk) && chunk.type === 'text' && typeof chunk.text === 'string') text += chunk.text;
    return text;
  }
  throw new ShapeError('message content is neither text nor chunks');
}

/** `{data: [{id, created}]}`, OpenAI's list shape, which compatible servers (Ollama, vLLM) copy. */
export function parseModelList(body: unknown): VendorModel[] {
  if (!isObject(body) || !Array.isArray(body.data)) throw new ShapeError('no data array');
  const out: VendorModel[] = [];
  for (const m of body.data) if (isObject(m) && typeof m.id === 'string') out.push({ id: m.id, created: epochSeconds(m.created) });
  return out;
}
