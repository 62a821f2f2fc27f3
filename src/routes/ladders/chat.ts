// POST /v1/{author}/{ladder}/chat/completions: runs the ladder and answers with its exit
// step's output as a chat completion, once the run has ended.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ChatCompletionSchema } from '../../schemas/chat.js';
import { errorResponses, successResponse, withExamples } from '../../schemas/common.js';
import { checkLadderRunRequest, toLadderMessages } from '../../schemas/ladder-run.js';
import { LadderChatRequestSchema, LadderParamsSchema } from '../../schemas/ladders.js';
import { chatCompletion, requireUserMessage, textChoice } from '../chat/completion.js';
import { checkMessages } from '../chat/messages.js';
import { rethrowUnlessParams } from './params.js';
import { streamLadderRun } from './stream.js';
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
        'The `x-ladder-instance` header names the run’s instance record. With `stream: true` the 200 answer is ' +
        '`text/event-stream` from the moment the instance exists: `: keep-alive` comments while earlier steps run, ' +
        '`data: <chat.completion.chunk>` events (id `ldr-<instance id>`, model `author/ladder`; the answer’s last call ' +
        'relayed live when it is a one-node exit step without gate or recursion, else the answer in one chunk), `data: [DONE]`; ' +
        'a failing run ends with one `data: {"error": …}` event and no `[DONE]` (docs/streaming.md).',
      produces: ['application/json', 'text/event-stream'],
      params: LadderParamsSchema,
      body: withExamples(LadderChatRequestSchema, ex.ladderChatRequestExample),
      response: { 200: successResponse('The ladder’s answer as a chat completion', ChatCompletionSchema, ex.ladderCompletionExample), ...errorResponses(400, 401, 402, 404, 413, 422, 429, 500, 502, 504) },
    },
  }, async (request, reply) => {
    rethrowUnlessParams(request);
    const { author, ladder: slug } = request.params;
    const { model, messages, knobs, stream } = request.body;
    checkMessages(messages);
    checkLadderRunRequest(request.body);
    requireUserMessage(messages);
    const ladder = await app.ladders.getVisible(request.principal, author, slug);
    if (stream === true) {
      const run = { principal: request.principal, ladder, model, messages: toLadderMessages(messages), knobs, log: request.log };
      return streamLadderRun(app, reply, { run, name: `${author}/${slug}`, includeUsage: request.body.stream_options?.include_usage === true });
    }
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
    await app.metering.setLadderHeaders(subjectOf(request.principal), reply, result.spendNanos); // quotas: run's cost, rate headers
    return chatCompletion(`ldr-${instance.id}`, `${author}/${slug}`, [textChoice(result.answer, 'stop')], result.usage, undefined, finishedAt);
  });
};

export default ladderChatRoutes;
