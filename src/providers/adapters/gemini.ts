// Google Gemini generateContent (Generative Language API, v1beta).
import type { ChatMessage, ChatRequest, FinishReason } from '../types.js';
import { isHttpUrl, parseDataUrl, partsOf, systemText, unsupportedImage } from './content.js';
import { ShapeError, isObject, usageOf, type Json, type VendorAdapter } from './types.js';

type Part = Json;
interface Content { role: 'user' | 'model'; parts: Part[] }

const FINISH: Record<string, FinishReason> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  MALFORMED_FUNCTION_CALL: 'tool_calls',
};

function partsFor(message: ChatMessage): Part[] {
  return partsOf(message.content).map((part): Part => {
    if (part.type === 'text') return { text: part.text };
    const data = parseDataUrl(part.image_url.url);
    if (data) return { inlineData: { mimeType: data.mediaType, data: data.data } };
    // fileData only reaches files uploaded to Google; fetching arbitrary URLs here would be an SSRF hole.
    throw unsupportedImage(
      'google',
      isHttpUrl(part.image_url.url) ? 'Gemini accepts images as base64 data URLs only.' : 'image_url must be a base64 data URL.',
    );
  });
}

/** System messages go to systemInstruction (in order); consecutive same-role turns are merged. */
export function toGeminiBody(request: ChatRequest): Json {
  const system: Part[] = [];
  const contents: Content[] = [];
  for (const message of request.messages) {
    if (message.role === 'system') {
      system.push({ text: systemText(message, 'google') });
      continue;
    }
    const role = message.role === 'assistant' ? 'model' : 'user';
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...partsFor(message));
    else contents.push({ role, parts: partsFor(message) });
  }
  const body: Json = { contents };
  if (system.length > 0) body.systemInstruction = { parts: system };
  const config: Json = {};
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.max_tokens !== undefined) config.maxOutputTokens = request.max_tokens;
  if (request.temperature !== undefined || request.max_tokens !== undefined) body.generationConfig = config;
  return body;
}

function errorReason(error: Json): string | undefined {
  if (!Array.isArray(error.details)) return undefined;
  for (const detail of error.details) if (isObject(detail) && typeof detail.reason === 'string') return detail.reason;
  return undefined;
}

export const geminiAdapter: VendorAdapter = {
  id: 'google',
  defaultBaseUrl: 'https://generativelanguage.googleapis.com',
  requestIdHeader: 'x-goog-request-id',
  headers: (apiKey) => ({ 'x-goog-api-key': apiKey, 'content-type': 'application/json' }),
  path: (basePath, vendorModel) => `${basePath}/v1beta/models/${encodeURIComponent(vendorModel)}:generateContent`,
  toVendor: toGeminiBody,
  fromVendor(body) {
    if (!isObject(body)) throw new ShapeError('body is not an object');
    const meta = isObject(body.usageMetadata) ? body.usageMetadata : {};
    // Thinking models bill their thoughts as output without returning them.
    const completion =
      (typeof meta.candidatesTokenCount === 'number' ? meta.candidatesTokenCount : 0) +
      (typeof meta.thoughtsTokenCount === 'number' ? meta.thoughtsTokenCount : 0);
    const usage = usageOf(meta.promptTokenCount, completion, meta.totalTokenCount);
    const candidate: unknown = Array.isArray(body.candidates) ? body.candidates[0] : undefined;
    if (candidate === undefined) {
      // A prompt blocked before generation comes back with promptFeedback and no candidates.
      if (isObject(body.promptFeedback)) return { content: '', finishReason: 'content_filter', usage };
      throw new ShapeError('no candidates');
    }
    if (!isObject(candidate)) throw new ShapeError('candidate is not an object');
    let content = '';
    const parts = isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
    for (const part of parts) if (isObject(part) && typeof part.text === 'string' && part.thought !== true) content += part.text;
    const reason = typeof candidate.finishReason === 'string' ? FINISH[candidate.finishReason] : undefined;
    return { content, finishReason: reason ?? 'stop', usage };
  },
  errorInfo(status, body) {
    const error = isObject(body) ? body.error : undefined;
    if (!isObject(error)) return {};
    const message = typeof error.message === 'string' ? error.message : undefined;
    // Google answers an invalid key with 400 INVALID_ARGUMENT; it is still a dead key, not a bad request.
    const reason = errorReason(error);
    if (status === 400 && (reason === 'API_KEY_INVALID' || reason === 'API_KEY_EXPIRED')) return { message, kind: 'auth' };
    return { message };
  },
};
