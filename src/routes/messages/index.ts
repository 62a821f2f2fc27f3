// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API, for Anthropic's SDK
// and the tools built on it. Authenticated by `x-api-key` or `Authorization: Bearer` (our API
// key); `anthropic-version` accepted. The request is routed like chat (priority order, fallback,
// breaker, quotas, ledger) to any vendor: Anthropic gets it as it came, the others translated.
// Errors on these routes, and on these routes only, are in Anthropic's shape.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { clientClosedRequest, invalidRequest } from '../../errors.js';
import { ProviderRouteError } from '../../providers/router.js';
import { withExamples, successResponse } from '../../schemas/common.js';
import {
  CountTokensRequestSchema, CountTokensSchema, MessageAnswerSchema, MessagesRequestSchema, type MessageAnswer,
} from '../../schemas/messages.js';
import { checkModelName } from '../../schemas/model-name.js';
import { subjectOf } from '../../usage/metering.js';
import { setRoutingHeaders, setTextHeader } from '../chat/completion.js';
import { messageAnswer } from './answer.js';
import { anthropicErrorHandler } from './errors.js';
import { streamMessage } from './stream.js';
import { toChatRequest } from './to-chat.js';
import { goneWhenClosed } from '../caller-gone.js';

const anthropicErrors = (...statuses: number[]) => Object.fromEntries([...statuses, 503].map((s) => [s, Type.Ref('AnthropicError')]));

const requestExample = { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'Hello, Claude' }] };
const answerExample: MessageAnswer = {
  id: 'msg_0d4ab1f2c3e44f0a9b8c7d6e5f4a3b2c', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Hello! How can I help you today?' }] as unknown as MessageAnswer['content'], stop_reason: 'end_turn', stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
};

/** Anthropic's SDK sends the key as `x-api-key`; `Authorization: Bearer` (its authToken) works too and wins. */
function authorizationOf(request: FastifyRequest): string | undefined {
  if (request.headers.authorization !== undefined) return request.headers.authorization;
  const key = request.headers['x-api-key'];
  return typeof key === 'string' ? `Bearer ${key}` : undefined;
}

/** `anthropic-beta` (comma-separated feature names), passed on to Anthropic; anything else is refused rather than forwarded. */
function betasOf(request: FastifyRequest): string | undefined {
  const raw = request.headers['anthropic-beta'];
  const value = Array.isArray(raw) ? raw.join(',') : raw;
  if (value === undefined || value.trim() === '') return undefined;
  if (value.length > 1000 || !/^[A-Za-z0-9._-]+(\s*,\s*[A-Za-z0-9._-]+)*$/.test(value.trim())) {
    throw invalidRequest('invalid_header', 'anthropic-beta must be a comma-separated list of beta feature names.', 'anthropic-beta');
  }
  return value.trim();
}

const messagesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.setErrorHandler(anthropicErrorHandler);
  app.addHook('onRequest', async (request) => {
    request.principal = await app.authenticator.authenticate(authorizationOf(request));
  });

  app.post('/messages', {
    schema: {
      operationId: 'createMessage',
      tags: ['messages'],
      summary: "Create a message (Anthropic's Messages API) with your own provider keys, on any vendor",
      description:
        "Anthropic's Messages request and answer, for Anthropic's SDK and tools built on it (set its base URL to this service, its API key to " +
        'yours: sent as `x-api-key` or `Authorization: Bearer`). Routed like chat completions to any vendor that serves the model: Anthropic ' +
        'gets the request as it came; the others get it translated (text, images, documents, tool_use/tool_result, tools, tool_choice, ' +
        'thinking as reasoning effort, top_k where the vendor has it). With `stream: true` the answer is Anthropic\'s event stream. Errors ' +
        'on this route are in Anthropic\'s shape `{type: "error", error: {type, message}}`; our error code is in `x-ladder-error-code`.',
      produces: ['application/json', 'text/event-stream'],
      body: withExamples(MessagesRequestSchema, requestExample),
      response: { 200: successResponse('The message', MessageAnswerSchema, answerExample), ...anthropicErrors(400, 401, 402, 413, 415, 429, 500, 502, 504) },
    },
  }, async (request, reply) => {
    const body = request.body;
    checkModelName(body.model);
    const chatRequest = toChatRequest(body, betasOf(request));
    const subject = subjectOf(request.principal);
    if (body.stream === true) return streamMessage(app, reply, { subject, model: body.model, chatRequest, log: request.log });
    const gone = goneWhenClosed(reply.raw);
    try {
      const result = await app.metering.direct(subject, reply, chatRequest, (sent) => app.callModel(subject.accountId, sent, gone, request.log));
      setRoutingHeaders(reply, result.attempts, result.upstreamMs, result.provider);
      if (result.model) setTextHeader(reply, 'x-ladder-model', result.model);
      return messageAnswer(body.model, result);
    } catch (error) {
      if (error instanceof ProviderRouteError) setRoutingHeaders(reply, error.attempts, error.upstreamMs);
      if (gone.aborted) throw clientClosedRequest();
      throw error;
    }
  });

  app.post('/messages/count_tokens', {
    schema: {
      operationId: 'countMessageTokens',
      tags: ['messages'],
      summary: 'Count the input tokens of a Messages request',
      description:
        "Anthropic's count_tokens, on the first connection serving the model whose vendor counts tokens without running the request " +
        '(Anthropic). When none of the connections serving the model can, 400 with `x-ladder-error-code: token_counting_not_supported`. Not metered.',
      body: withExamples(CountTokensRequestSchema, { model: requestExample.model, messages: requestExample.messages }),
      response: { 200: successResponse('The input token count', CountTokensSchema, { input_tokens: 10 }), ...anthropicErrors(400, 401, 413, 415, 429, 500, 502, 504) },
    },
  }, async (request, reply) => {
    const body = request.body;
    checkModelName(body.model);
    try {
      const counted = await app.countMessageTokens(request.principal.accountId, body.model, body, undefined, request.log, betasOf(request));
      setRoutingHeaders(reply, counted.attempts, counted.upstreamMs, counted.provider);
      return { input_tokens: counted.inputTokens };
    } catch (error) {
      if (error instanceof ProviderRouteError) setRoutingHeaders(reply, error.attempts, error.upstreamMs);
      throw error;
    }
  });
};

export default messagesRoutes;
