// POST /v1/pipelines/instances/{id}/cancel. Each transition is one conditional UPDATE, so a
// worker claiming or finishing the run at the same moment is never overwritten: a pending
// run is cancelled at once; a running one is marked, and its worker stops it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { instanceAlreadyFinished, instanceNotFound, internalError } from '../../errors.js';
import { runCancelled } from '../../ladders/engine/limits.js';
import { errorResponses, successResponse } from '../../schemas/common.js';
import { InstanceParamsSchema, InstanceSchema } from '../../schemas/pipelines.js';
import { accessibleInstance } from './instance-access.js';
import { instanceView } from './views.js';
import * as ex from '../../schemas/examples.js';

// A row moves on at most twice between the attempts (pending → running → finished).
const ATTEMPTS = 3;

const cancelRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/instances/:id/cancel', {
    schema: {
      operationId: 'cancelInstance',
      tags: ['pipelines'],
      summary: 'Cancel a pending or running instance',
      description:
        'A pending instance is `cancelled` at once. A running one gets `cancel_requested_at` and its worker stops it within about ' +
        'a second: the answer may still say `running`, so poll the instance. Cancelling a cancelled instance answers it again; ' +
        'a completed or failed one is 409.',
      params: InstanceParamsSchema,
      response: { 200: successResponse('The instance: cancelled, or running with cancel_requested_at set', InstanceSchema, ex.cancelledInstanceExample), ...errorResponses(401, 404, 409, 500) },
    },
  }, async (request) => {
    const { accountId } = request.principal;
    const { id } = request.params;
    // A key that may not see the ladder may not cancel its runs (an instance's ladder never changes).
    await accessibleInstance(app.instances, request.principal, id);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const cancelled = await app.instances.cancelPending(accountId, id, runCancelled());
      if (cancelled) {
        app.metrics.runFinished('async', 'cancelled'); // metrics: a queued run ended before any worker took it
        return instanceView(cancelled);
      }
      const marked = await app.instances.requestCancel(accountId, id);
      if (marked) {
        await app.runNotices.cancelRequested(id).catch((err: unknown) => request.log.warn({ err }, 'cancel notice failed'));
        return instanceView(marked, (await app.instances.callTotals([id])).get(id));
      }
      const row = await app.instances.getOwned(accountId, id);
      if (!row) throw instanceNotFound(id);
      if (row.status === 'cancelled') return instanceView(row);
      if (row.status === 'completed' || row.status === 'failed') throw instanceAlreadyFinished(id, row.status);
      // Still pending or running: it changed between the statements (say, a lease expired); try again.
    }
    throw internalError();
  });
};

export default cancelRoute;
