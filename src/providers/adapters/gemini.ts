// Google Gemini generateContent (Generative Language API, v1beta). Tools become
// functionDeclarations, tool calls functionCall parts and tool results functionResponse parts.
import { geminiStream } from './gemini-stream.js';
import { geminiEmbeddings } from '../embeddings/gemini-embeddings.js';
import { checkOrigin } from '../messages/origin.js';
import { randomUUID } from 'node:crypto';
import { invalidRequest } from '../../errors.js';
import type { RequestMessage } from '../../schemas/chat-messages.js';
import type { ChatRequest, Choice, FinishReason } from '../types.js';
import {
  THINKING_BUDGET, checkSupport, functionToolsOnly, isHttpUrl, parseArguments, parseDataUrl, partsOf, plainText, stopList,
  toolNamesById, unsupportedContent, unsupportedParameter, type SupportTable,
} from './content.js';
import { ShapeError, count, isObject, outputOf, textChoice, usageOf, withDetails, type Json, type VendorAdapter } from './types.js';

type Part = Json;
interface Content { role: 'user' | 'model'; parts: Part[] }
const P = 'google';

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

const SUPPORT: SupportTable = {
  audio: 'no',
  frequency_penalty: 'yes',
  function_call: 'no',
  functions: 'no',
  logit_bias: 'no',
  logprobs: 'yes',
  max_completion_tokens: 'yes',
  max_tokens: 'yes',
  metadata: 'noop',
  modalities: (r) => (r.modalities?.includes('audio') ? 'answers in text only here' : null),
  moderation: 'no',
  n: 'yes',
  parallel_tool_calls: (r) => (r.parallel_tool_calls === false ? 'cannot be told to make at most one tool call' : null),
  prediction: 'no',
  presence_penalty: 'yes',
  prompt_cache_key: 'noop',
  prompt_cache_options: 'noop',
  prompt_cache_retention: 'noop',
  reasoning_effort: 'yes',
  response_format: 'yes',
  safety_identifier: 'noop',
  seed: 'yes',
  service_tier: 'noop',
  stop: 'yes',
  store: 'noop',
  temperature: 'yes',
  tool_choice: (r) => (typeof r.tool_choice === 'object' && r.tool_choice.type === 'custom' ? 'has function tools only, no custom tools' : null),
  tools: functionToolsOnly,
  top_logprobs: 'yes',
  top_p: 'yes',
  user: 'noop',
  verbosity: 'no',
  web_search_options: 'no',
};

function userParts(message: RequestMessage, i: number): Part[] {
  return partsOf(message.content).map((part, j): Part => {
    const param = `messages[${i}].content[${j}]`;
    switch (part.type) {
      case 'text':
        return { text: part.text };
      case 'image_url': {
        const data = parseDataUrl(part.image_url.url);
        if (data) return { inlineData: { mimeType: data.mediaType, data: data.data } };
        // fileData only reaches files uploaded to Google; fetching arbitrary URLs here would be an SSRF hole.
        throw unsupportedContent(P, param, isHttpUrl(part.image_url.url) ? 'Gemini accepts images as base64 data URLs only.' : 'image_url must be a base64 data URL.');
      }
      case 'input_audio':
        return { inlineData: { mimeType: `audio/${part.input_audio.format}`, data: part.input_audio.data } };
      case 'file': {
        const data = part.file.file_data ? parseDataUrl(part.file.file_data) : null;
        if (data) return { inlineData: { mimeType: data.mediaType, data: data.data } };
        throw unsupportedContent(P, param, 'a file part must carry file_data as a base64 data URL (OpenAI file ids mean nothing here).');
      }
      default:
        throw unsupportedContent(P, param, `${part.type} content parts are not accepted in user messages.`);
    }
  });
}

function modelParts(message: RequestMessage, i: number): Part[] {
  const parts: Part[] = [];
  const text = plainText(message.content, P, `messages[${i}].content`);
  if (text !== '' || !message.tool_calls?.length) parts.push({ text });
  for (const [j, call] of (message.tool_calls ?? []).entries()) {
    if (call.type !== 'function') throw unsupportedParameter(P, `messages[${i}].tool_calls[${j}]`, 'has function tool calls only');
    parts.push({ functionCall: { name: call.function.name, args: parseArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`) } });
  }
  return parts;
}

/** Gemini answers a call by name; a JSON object result is sent as it is, anything else as {output}. */
function functionResponse(message: RequestMessage, i: number, names: Map<string, string>): Part {
  const name = names.get(message.tool_call_id ?? '');
  if (name === undefined) {
    throw invalidRequest('invalid_value', `messages[${i}].tool_call_id does not match a tool call of an earlier assistant message.`, `messages[${i}].tool_call_id`);
  }
  const text = plainText(message.content, P, `messages[${i}].content`);
  let response: unknown;
  try {
    response = JSON.parse(text);
  } catch {
    response = undefined;
  }
  return { functionResponse: { name, response: isObject(response) ? response : { output: response ?? text } } };
}

/** System and developer messages go to systemInstruction (in order); consecutive same-role turns are merged. */
export function toGeminiBody(request: ChatRequest): Json {
  checkSupport(P, request, SUPPORT);
  const topK = checkOrigin(P, request, true)?.topK;
  const system: Part[] = [];
  const contents: Content[] = [];
  const names = request.messages.some((m) => m.role === 'tool') ? toolNamesById(request.messages) : new Map<string, string>();
  const push = (role: Content['role'], parts: Part[]) => {
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const [i, message] of request.messages.entries()) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push({ text: plainText(message.content, P, `messages[${i}].content`) });
        break;
      case 'user':
        push('user', userParts(message, i));
        break;
      case 'assistant':
        push('model', modelParts(message, i));
        break;
      case 'tool':
        push('user', [functionResponse(message, i, names)]);
        break;
      default:
        throw unsupportedParameter(P, `messages[${i}].role`, 'takes tool messages, not the deprecated function role');
    }
  }
  const body: Json = { contents };
  if (system.length > 0) body.systemInstruction = { parts: system };
  const config = generationConfig(request);
  if (topK !== undefined) body.generationConfig = { ...config, topK };
  else if (config) body.generationConfig = config;
  if (request.tools && request.tools.length > 0) {
    body.tools = [{
      functionDeclarations: request.tools.map((tool) => {
        const fn = tool.type === 'function' ? tool.function : null;
        // parametersJsonSchema takes JSON Schema as OpenAI callers write it (parameters takes an OpenAPI subset).
        return { name: fn!.name, ...(fn!.description ? { description: fn!.description } : {}), ...(fn!.parameters ? { parametersJsonSchema: fn!.parameters } : {}) };
      }),
    }];
    const toolConfig = functionCallingConfig(request);
    if (toolConfig) body.toolConfig = { functionCallingConfig: toolConfig };
  }
  return body;
}

function generationConfig(r: ChatRequest): Json | null {
  const config: Json = {};
  if (r.temperature !== undefined) config.temperature = r.temperature;
  if (r.top_p !== undefined) config.topP = r.top_p;
  const max = r.max_completion_tokens ?? r.max_tokens;
  if (max !== undefined) config.maxOutputTokens = max;
  if (r.stop !== undefined) config.stopSequences = stopList(r.stop);
  if (r.seed !== undefined) config.seed = r.seed;
  if (r.n !== undefined) config.candidateCount = r.n;
  if (r.presence_penalty !== undefined) config.presencePenalty = r.presence_penalty;
  if (r.frequency_penalty !== undefined) config.frequencyPenalty = r.frequency_penalty;
  if (r.logprobs !== undefined) config.responseLogprobs = r.logprobs;
  if (r.top_logprobs !== undefined && r.logprobs) config.logprobs = r.top_logprobs;
  const format = r.response_format;
  if (format && format.type !== 'text') {
    config.responseMimeType = 'application/json';
    // responseJsonSchema takes JSON Schema itself; responseSchema would need OpenAPI's subset.
    if (format.type === 'json_schema' && format.json_schema.schema) config.responseJsonSchema = format.json_schema.schema;
  }
  if (r.reasoning_effort !== undefined) {
    config.thinkingConfig = { thinkingBudget: r.reasoning_effort === 'none' ? 0 : THINKING_BUDGET[r.reasoning_effort] };
  }
  return Object.keys(config).length > 0 ? config : null;
}

function functionCallingConfig(r: ChatRequest): Json | null {
  const choice = r.tool_choice;
  if (choice === undefined) return null;
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'required') return { mode: 'ANY' };
  if (choice.type === 'function') return { mode: 'ANY', allowedFunctionNames: [choice.function.name] };
  if (choice.type === 'allowed_tools') {
    const allowed = choice.allowed_tools.tools.flatMap((t: Json) => (isObject(t.function) && typeof t.function.name === 'string' ? [t.function.name] : []));
    return { mode: choice.allowed_tools.mode === 'required' ? 'ANY' : 'AUTO', allowedFunctionNames: allowed };
  }
  return null;
}

function errorReason(error: Json): string | undefined {
  if (!Array.isArray(error.details)) return undefined;
  for (const detail of error.details) if (isObject(detail) && typeof detail.reason === 'string') return detail.reason;
  return undefined;
}

function logprobsOf(result: unknown): Choice['logprobs'] {
  if (!isObject(result) || !Array.isArray(result.chosenCandidates)) return null;
  const tops = Array.isArray(result.topCandidates) ? result.topCandidates : [];
  const entry = (c: unknown) => (isObject(c) ? { token: String(c.token ?? ''), logprob: typeof c.logProbability === 'number' ? c.logProbability : 0, bytes: null } : null);
  const content = result.chosenCandidates.flatMap((chosen, i) => {
    const token = entry(chosen);
    if (!token) return [];
    const top = tops[i];
    const alternatives = isObject(top) && Array.isArray(top.candidates) ? top.candidates.flatMap((c) => entry(c) ?? []) : [];
    return [{ ...token, top_logprobs: alternatives }];
  });
  return { content, refusal: null };
}

function choiceOf(candidate: unknown, position: number): Choice {
  if (!isObject(candidate)) throw new ShapeError('candidate is not an object');
  let text = '';
  const calls: NonNullable<Choice['message']['tool_calls']> = [];
  const parts = isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
  for (const part of parts) {
    if (!isObject(part)) continue;
    if (typeof part.text === 'string' && part.thought !== true) text += part.text;
    const call = part.functionCall;
    if (isObject(call) && typeof call.name === 'string') {
      // Gemini rarely gives call ids; one is made up only then, and a given one is kept as it is.
      const id = typeof call.id === 'string' && call.id ? call.id : `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      calls.push({ id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } });
    }
  }
  const mapped = typeof candidate.finishReason === 'string' ? FINISH[candidate.finishReason] : undefined;
  const finish = calls.length > 0 && (mapped === undefined || mapped === 'stop') ? 'tool_calls' : mapped ?? 'stop';
  const choice = textChoice(typeof candidate.index === 'number' ? candidate.index : position, calls.length > 0 && text === '' ? null : text, finish, calls);
  choice.logprobs = logprobsOf(candidate.logprobsResult);
  return choice;
}

export const geminiAdapter: VendorAdapter = {
  id: P,
  defaultBaseUrl: 'https://generativelanguage.googleapis.com',
  requestIdHeader: 'x-goog-request-id',
  headers: (apiKey) => ({ 'x-goog-api-key': apiKey, 'content-type': 'application/json' }),
  path: (basePath, vendorModel) => `${basePath}/v1beta/models/${encodeURIComponent(vendorModel)}:generateContent`,
  toVendor: toGeminiBody,
  stream: geminiStream(FINISH),
  embeddings: geminiEmbeddings,
  fromVendor(body) {
    if (!isObject(body)) throw new ShapeError('body is not an object');
    const meta = isObject(body.usageMetadata) ? body.usageMetadata : {};
    // Thinking models bill their thoughts as output without returning them.
    const completion = count(meta.candidatesTokenCount) + count(meta.thoughtsTokenCount);
    const usage = withDetails(usageOf(meta.promptTokenCount, completion, meta.totalTokenCount), meta.cachedContentTokenCount, meta.thoughtsTokenCount);
    const model = typeof body.modelVersion === 'string' ? body.modelVersion : undefined;
    const candidates = Array.isArray(body.candidates) ? body.candidates : [];
    if (candidates.length === 0) {
      // A prompt blocked before generation comes back with promptFeedback and no candidates.
      if (isObject(body.promptFeedback)) return outputOf([textChoice(0, '', 'content_filter')], usage, { model });
      throw new ShapeError('no candidates');
    }
    return outputOf(candidates.map(choiceOf), usage, { model });
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
  models: {
    path: (basePath) => `${basePath}/v1beta/models?pageSize=1000`,
    parse(body) {
      if (!isObject(body) || !Array.isArray(body.models)) throw new ShapeError('no models array');
      return body.models.flatMap((m) => {
        if (!isObject(m) || typeof m.name !== 'string') return [];
        const methods = Array.isArray(m.supportedGenerationMethods) ? m.supportedGenerationMethods : ['generateContent'];
        if (!methods.includes('generateContent')) return [];
        return [{ id: m.name.replace(/^models\//, ''), created: 0 }];
      });
    },
  },
};
