// POST /v1/chat/completions: one model call through the caller's connections, with fallback.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { clientClosedRequest } from '../../errors.js';
import { ProviderRouteError } from '../../providers/router.js';
import { ChatCompletionSchema, DirectChatRequestSchema } from '../../schemas/chat.js';
import { errorResponses, successResponse, withExamples } from '../../schemas/common.js';
import { checkModelName } from '../../schemas/model-name.js';
import { subjectOf } from '../../usage/metering.js';
import { chatCompletion, requireUserMessage, setRoutingHeaders, setTextHeader, textChoice, toChatRequest } from './completion.js';
import { streamChatCompletion } from './stream.js';
import { checkMessages } from './messages.js';
import * as ex from '../../schemas/examples.js';
import { goneWhenClosed } from '../caller-gone.js';

const chatRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/completions', {
    schema: {
      operationId: 'createChatCompletion',
      tags: ['chat'],
      summary: 'Create a chat completion with your own provider keys',
      description:
        "Every member of OpenAI's request is accepted; one a candidate vendor cannot honour skips that vendor, and is " +
        '400 unsupported_parameter when no candidate can (docs/providers.md has the table). `model` in the answer is the ' +
        'name you asked for; the `x-ladder-model` header has the vendor’s exact model, `x-ladder-provider` the connection. ' +
        'With `stream: true` the 200 answer is `text/event-stream`: `data: <chat.completion.chunk>` events and `data: [DONE]`, ' +
        'or one `data: {"error": …}` event and no `[DONE]` when the vendor fails after the first chunk (docs/streaming.md).',
      produces: ['application/json', 'text/event-stream'],
      body: withExamples(DirectChatRequestSchema, ex.chatRequestExample),
      response: { 200: successResponse('The chat completion', ChatCompletionSchema, ex.chatCompletionExample), ...errorResponses(400, 401, 402, 404, 413, 422, 429, 500, 502, 504) },
    },
  }, async (request, reply) => {
    const body = request.body;
    checkModelName(body.model);
    checkMessages(body.messages);
    requireUserMessage(body.messages);
    if (body.stream === true) {
      const subject = subjectOf(request.principal);
      return streamChatCompletion(app, reply, { subject, body, chatRequest: toChatRequest(body), log: request.log });
    }
    const gone = goneWhenClosed(reply.raw);
    try {
      const chatRequest = toChatRequest(body);
      // quotas: limits before the call; cost, rate headers and a ledger row after it.
      const result = await app.metering.direct(subjectOf(request.principal), reply, chatRequest, (sent) =>
        app.callModel(request.principal.accountId, sent, gone, request.log),
      );
      setRoutingHeaders(reply, result.attempts, result.upstreamMs, result.provider);
      if (result.model) setTextHeader(reply, 'x-ladder-model', result.model);
      const choices = result.choices ?? [textChoice(result.content, result.finishReason)];
      return chatCompletion(`ldr-chat-${randomUUID()}`, body.model, choices, result.usage, result);
    } catch (error) {
      // Failed calls still say what was tried; the error handler renders the body.
      if (error instanceof ProviderRouteError) setRoutingHeaders(reply, error.attempts, error.upstreamMs);
      if (gone.aborted) throw clientClosedRequest();
      throw error;
    }
  });
};

export default chatRoutes;
