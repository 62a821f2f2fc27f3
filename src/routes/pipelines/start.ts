// POST /v1/pipelines/instances: checks a ladder run exactly as the synchronous route does,
// then queues it for a worker and answers 202 at once (docs/pipelines.md).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { idempotencyKeyReused } from '../../errors.js';
import { ladderNotFound } from '../../services/ladders.js';
import { errorResponses, successResponse, withExamples } from '../../schemas/common.js';
import { InstanceStartedSchema, StartInstanceBodySchema, StartInstanceHeadersSchema, type InstanceStarted } from '../../schemas/pipelines.js';
import type { InstanceRow } from '../../services/instances.js';
import { checkLadderRunRequest, toLadderMessages } from '../../schemas/ladder-run.js';
import { rejectStreaming, requireUserMessage } from '../chat/completion.js';
import { subjectOf } from '../../usage/metering.js';
import { checkMessages } from '../chat/messages.js';
import { idempotencyKeyOf, requestHash } from './idempotency.js';
import { mayAccessInstance } from './instance-access.js';
import { mayAccessLadder } from '../../services/ladder-access.js';
import * as ex from '../../schemas/examples.js';

export const instancePath = (id: string) => `/v1/pipelines/instances/${id}`;

function started(reply: FastifyReply, instance: InstanceRow): InstanceStarted {
  void reply.code(202).header('location', instancePath(instance.id));
  return { instanceId: instance.id, status: 'pending' };
}

const startRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/instances', {
    schema: {
      operationId: 'startInstance',
      tags: ['pipelines'],
      summary: 'Start a ladder run in the background',
      description:
        'Every check of `POST /v1/{author}/{ladder}/chat/completions` is made first, with the same answers; then the run is queued ' +
        'and the answer is 202 with a `Location` to poll. Send an `Idempotency-Key` to make retries safe.',
      headers: StartInstanceHeadersSchema,
      body: withExamples(StartInstanceBodySchema, ex.startInstanceExample),
      response: { 202: successResponse('Queued; poll the `Location`. A repeated Idempotency-Key answers this same body, whatever the status is now.', InstanceStartedSchema, ex.instanceStartedExample), ...errorResponses(400, 401, 404, 409, 413, 422, 500) },
    },
  }, async (request, reply) => {
    const { principal } = request;
    const key = idempotencyKeyOf(request.headers['idempotency-key']);
    const { author, template, ...runRequest } = request.body;
    const { model, messages, knobs, stream } = runRequest;
    rejectStreaming(stream);
    checkMessages(messages);
    checkLadderRunRequest(runRequest);
    requireUserMessage(messages);
    const hash = key === null ? null : requestHash(request.body);
    // A key that may not see the ladder gets the 404 of a ladder that does not exist, before any
    // lookup: a replay must not hand it another key's run of that ladder either.
    if (!mayAccessLadder(principal.access, author, template)) throw ladderNotFound(author, template);
    // A retry answers what the first request got, whatever has happened to the ladder since.
    const replay = (instance: InstanceRow) => {
      if (instance.requestHash !== hash) throw idempotencyKeyReused();
      // The same body names the same ladder; this holds even if two bodies ever hashed alike.
      if (!mayAccessInstance(principal, instance)) throw ladderNotFound(author, template);
      void reply.header('idempotent-replayed', 'true');
      return started(reply, instance);
    };
    if (key !== null) {
      const existing = await app.instances.findByIdempotencyKey(principal.accountId, key);
      if (existing) return replay(existing);
    }

    const ladder = await app.ladders.getVisible(principal, author, template);
    const run = await app.ladderRunner.prepare({
      principal,
      ladder,
      model,
      messages: toLadderMessages(messages),
      knobs,
    });
    await app.metering.checkRunStart(subjectOf(principal)); // quotas: a key or account over its limits queues nothing
    const { instance, created } = await app.ladderRunner.queue(run, key === null ? null : { key, requestHash: hash! });
    if (!created) return replay(instance);
    // Only a fast path: workers also poll, so a lost notice delays the run, never loses it.
    await app.runNotices.pendingCreated().catch((err: unknown) => request.log.warn({ err }, 'pending notice failed'));
    return started(reply, instance);
  });
};

export default startRoute;
