// POST /v1/pipelines/instances/{id}/rerun: a new background run from a finished one, its source
// named in `rerun_of`. Every call whose model and whole prompt equal one the source recorded
// reuses that call (src/worker/reuse.ts), so changing the last step pays for the last step only.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { idempotencyKeyReused, instanceNotFinished, instanceNotFound } from '../../errors.js';
import { errorResponses, successResponse, withExamples } from '../../schemas/common.js';
import {
  InstanceParamsSchema, InstanceSchema, InstanceStartedSchema, RerunBodySchema, StartInstanceHeadersSchema, type Instance, type InstanceStarted,
} from '../../schemas/pipelines.js';
import type { InstanceRow } from '../../services/instances.js';
import { ladderNotFound } from '../../services/ladders.js';
import { subjectOf } from '../../usage/metering.js';
import { idempotencyKeyOf, requestHash } from './idempotency.js';
import { accessibleInstance, mayAccessInstance } from './instance-access.js';
import { rerunInput } from './rerun-input.js';
import { instancePath } from './start.js';
import { instanceView } from './views.js';
import { waitUntilFinished } from './wait-finish.js';
import * as ex from '../../schemas/examples.js';

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

const rerunRoute: FastifyPluginAsyncTypebox = async (app) => {
  // A bodiless POST is a rerun with no changes.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined || request.body === null) request.body = {};
  });

  app.post('/instances/:id/rerun', {
    schema: {
      operationId: 'rerunInstance',
      tags: ['pipelines'],
      summary: 'Run a finished instance again, reusing its identical model calls',
      description:
        'Starts a new background instance (`rerun_of` names the source) with the source run\'s version, model, input and knobs, ' +
        'or the ones given. Each model call whose model and whole prompt equal a call the source run recorded reuses that call ' +
        '(its output and usage; each source call at most once): no vendor call, no spend, no quota use. Answers 202 with a ' +
        '`Location`, or with `wait: true` 200 and the finished instance. `Idempotency-Key` works as for starts.',
      params: InstanceParamsSchema,
      headers: StartInstanceHeadersSchema,
      body: withExamples(RerunBodySchema, ex.rerunBodyExample),
      response: {
        200: successResponse('`wait: true`: the rerun, finished, as GET answers it', InstanceSchema, ex.rerunInstanceExample),
        202: successResponse('Queued; poll the `Location`. A repeated Idempotency-Key answers the same instance.', InstanceStartedSchema, ex.instanceStartedExample),
        ...errorResponses(400, 401, 402, 404, 409, 413, 422, 429, 500),
      },
    },
  }, async (request, reply) => {
    const { principal } = request;
    const key = idempotencyKeyOf(request.headers['idempotency-key']);
    const source = await accessibleInstance(app.instances, principal, request.params.id);
    const { wait, ...changes } = request.body;
    // `wait` changes how the answer comes, not what runs: a retry may add or drop it.
    const hash = key === null ? null : requestHash({ rerun_of: source.id, ...changes });

    const answer = async (instance: InstanceRow): Promise<InstanceStarted | Instance> => {
      void reply.header('location', instancePath(instance.id));
      if (wait === true && (await waitFor(instance.id, reply))) {
        const row = await app.instances.getOwned(principal.accountId, instance.id);
        if (row) return instanceView(row);
      }
      void reply.code(202);
      return { instanceId: instance.id, status: 'pending' };
    };
    const replay = (instance: InstanceRow) => {
      if (instance.requestHash !== hash) throw idempotencyKeyReused();
      if (!mayAccessInstance(principal, instance)) throw instanceNotFound(source.id);
      void reply.header('idempotent-replayed', 'true');
      return answer(instance);
    };
    if (key !== null) {
      const existing = await app.instances.findByIdempotencyKey(principal.accountId, key);
      if (existing) return replay(existing);
    }

    if (!FINISHED.has(source.status)) throw instanceNotFinished(source.id, source.status);
    // The ladder as the caller may see it now; one deleted (and perhaps made anew) has none of the source's versions.
    const current = await app.ladders.getVisible(principal, source.author, source.slug);
    if (current.row.id !== source.ladderId) throw ladderNotFound(source.author, source.slug);
    const ladder = await app.ladders.atVersion(current, changes.version ?? source.ladderVersion);
    const run = await app.ladderRunner.prepare(rerunInput(principal, ladder, source, changes));
    await app.metering.checkRunStart(subjectOf(principal)); // quotas: a rerun is a run
    const { instance, created } = await app.ladderRunner.queue({ ...run, rerunOf: source.id }, key === null ? null : { key, requestHash: hash! });
    if (!created) return replay(instance);
    await app.runNotices.pendingCreated().catch((err: unknown) => request.log.warn({ err }, 'pending notice failed'));
    return answer(instance);
  });

  /** Waits for the run to end, while the client stays; the run goes on either way. */
  async function waitFor(id: string, reply: FastifyReply): Promise<boolean> {
    const gone = new AbortController();
    const onClose = () => gone.abort();
    reply.raw.once('close', onClose);
    try {
      const deps = { instances: app.instances, wakeups: app.eventWakeups, pollMs: app.config.events.pollMs };
      return await waitUntilFinished(deps, id, app.config.ladders.maxRunMs + app.config.worker.leaseMs, gone.signal);
    } finally {
      reply.raw.off('close', onClose);
    }
  }
};

export default rerunRoute;
