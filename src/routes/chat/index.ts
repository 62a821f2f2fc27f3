// POST /v1/chat/completions: one model call through the caller's connections, with fallback.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { clientClosedRequest } from '../../errors.js';
import { ProviderRouteError } from '../../providers/router.js';
import { ChatCompletionSchema, DirectChatRequestSchema } from '../../schemas/chat.js';
import { errorResponses } from '../../schemas/common.js';
import { subjectOf } from '../../usage/metering.js';
import { chatCompletion, rejectStreaming, requireUserMessage, setRoutingHeaders } from './completion.js';

const chatRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/completions', {
    schema: {
      tags: ['chat'],
      summary: 'Create a chat completion with your own provider keys',
      body: DirectChatRequestSchema,
      response: { 200: ChatCompletionSchema, ...errorResponses(400, 401, 402, 404, 413, 422, 429, 500, 502, 504) },
    },
  }, async (request, reply) => {
    const { model, messages, temperature, max_tokens, stream } = request.body;
    rejectStreaming(stream);
    requireUserMessage(messages);
    const abort = new AbortController();
    // A caller that hangs up should not keep a vendor call (and its cost) running.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    try {
      const chatRequest = { model, messages: messages.map(({ role, content }) => ({ role, content })), temperature, max_tokens };
      // quotas: limits before the call; cost, rate headers and a ledger row after it.
      const result = await app.metering.direct(subjectOf(request.principal), reply, chatRequest, () =>
        app.callModel(request.principal.accountId, chatRequest, abort.signal, request.log),
      );
      setRoutingHeaders(reply, result.attempts, result.upstreamMs, result.provider);
      return chatCompletion(`ldr-chat-${randomUUID()}`, model, result.content, result.finishReason, result.usage);
    } catch (error) {
      // Failed calls still say what was tried; the error handler renders the body.
      if (error instanceof ProviderRouteError) setRoutingHeaders(reply, error.attempts, error.upstreamMs);
      if (abort.signal.aborted) throw clientClosedRequest();
      throw error;
    }
  });
};

export default chatRoutes;
