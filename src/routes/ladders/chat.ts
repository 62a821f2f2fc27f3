// POST /v1/{author}/{ladder}/chat/completions: runs the ladder and answers with its exit
// step's output as a chat completion, once the run has ended.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ChatCompletionSchema } from '../../schemas/chat.js';
import { errorResponses, successResponse, withExamples } from '../../schemas/common.js';
import { checkLadderRunRequest, toLadderMessages } from '../../schemas/ladder-run.js';
import { LadderChatRequestSchema, LadderParamsSchema } from '../../schemas/ladders.js';
import { chatCompletion, rejectStreaming, requireUserMessage, textChoice } from '../chat/completion.js';
import { checkMessages } from '../chat/messages.js';
import { rethrowUnlessParams } from './params.js';
import { subjectOf } from '../../usage/metering.js';
import * as ex from '../../schemas/examples.js';

const ladderChatRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/:author/:ladder/chat/completions', {
    attachValidation: true,
    schema: {
      operationId: 'runLadder',
      tags: ['ladders'],
      summary: 'Run a ladder and get its answer as a chat completion',
      description:
        'Blocks until the run ends. The last user message is the ladder input; usage is summed over every model call. ' +
        'The `x-ladder-instance` header names the run’s instance record.',
      params: LadderParamsSchema,
      body: withExamples(LadderChatRequestSchema, ex.ladderChatRequestExample),
      response: { 200: successResponse('The ladder’s answer as a chat completion', ChatCompletionSchema, ex.ladderCompletionExample), ...errorResponses(400, 401, 402, 404, 413, 422, 429, 500, 502, 504) },
    },
  }, async (request, reply) => {
    rethrowUnlessParams(request);
    const { author, ladder: slug } = request.params;
    const { model, messages, knobs, stream } = request.body;
    rejectStreaming(stream);
    checkMessages(messages);
    checkLadderRunRequest(request.body);
    requireUserMessage(messages);
    const ladder = await app.ladders.getVisible(request.principal, author, slug);
    const abort = new AbortController();
    // A caller that hangs up should not keep the run, and its spending, going.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const { instance, result, finishedAt } = await app.ladderRunner.runSync({
      principal: request.principal,
      ladder,
      model,
      messages: toLadderMessages(messages),
      knobs,
      signal: abort.signal,
      log: request.log,
      onInstance: (created) => void reply.header('x-ladder-instance', created.id),
    });
    await app.metering.setLadderHeaders(subjectOf(request.principal), reply, result.spendUsd); // quotas: run's cost, rate headers
    return chatCompletion(`ldr-${instance.id}`, `${author}/${slug}`, [textChoice(result.answer, 'stop')], result.usage, undefined, finishedAt);
  });
};

export default ladderChatRoutes;
