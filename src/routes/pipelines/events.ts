// GET /v1/pipelines/instances/{id}/events: the run's events as Server-Sent Events, for its
// owner. Format, resumption and limits: docs/pipelines-events.md.
import { PassThrough } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { invalidRequest } from '../../errors.js';
import { errorResponses } from '../../schemas/common.js';
import { EVENT_STREAM_DESCRIPTION, EventStreamHeadersSchema } from '../../schemas/pipeline-events.js';
import { InstanceParamsSchema } from '../../schemas/pipelines.js';
import { pumpEvents } from './event-stream.js';
import { accessibleInstanceId } from './instance-access.js';
import { createSharedMessages } from './shared-messages.js';
import { createOutlet } from './stream-outlet.js';
import { createStreamSlots } from './stream-slots.js';
import * as ex from '../../schemas/examples.js';

const EVENT_ID_RE = /^(0|[1-9][0-9]{0,9})$/;

const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { maxStreams, maxStreamsPerAccount, pollMs, keepAliveMs, idleTimeoutMs } = app.config.events;
  const terminals = createSharedMessages();
  const deps = { events: app.instanceEvents, instances: app.instances, wakeups: app.eventWakeups, terminals, pollMs, keepAliveMs };
  const slots = createStreamSlots(maxStreams, maxStreamsPerAccount);
  const open = new Set<AbortController>();
  // Streams never end by themselves while a run is pending; a closing server ends them (clients reconnect).
  app.addHook('preClose', async () => {
    for (const stream of open) stream.abort();
  });

  app.get('/instances/:id/events', {
    schema: {
      operationId: 'streamInstanceEvents',
      tags: ['pipelines'],
      summary: 'Watch a pipeline instance live (Server-Sent Events)',
      description: EVENT_STREAM_DESCRIPTION,
      params: InstanceParamsSchema,
      headers: EventStreamHeadersSchema,
      produces: ['text/event-stream'],
      response: {
        200: {
          description: 'The event stream',
          content: {
            'text/event-stream': {
              schema: Type.String({ description: 'id / event / data lines, and `: keep-alive` comments' }),
              example: ex.eventStreamExample,
            },
          },
        },
        ...errorResponses(400, 401, 404, 429, 503),
      },
    },
  }, async (request, reply) => {
    const { id } = request.params;
    const instanceId = await accessibleInstanceId(app.instances, request.principal, id);
    const lastEventId = request.headers['last-event-id'];
    if (lastEventId !== undefined && !EVENT_ID_RE.test(lastEventId.trim())) {
      throw invalidRequest('invalid_last_event_id', 'Last-Event-ID must be an event id this stream sent (a whole number).', 'Last-Event-ID');
    }
    const release = slots.take(request.principal.accountId);

    // The slot is held until the response closes, not until the last event is handed over: a
    // client still reading (or not reading) a finished run's history is a stream like any other.
    const abort = new AbortController();
    open.add(abort);
    const out = new PassThrough();
    const stop = () => {
      abort.abort();
      open.delete(abort);
      out.destroy();
      release();
    };
    reply.raw.once('close', stop);
    const drop = () => {
      request.log.info({ instance_id: instanceId }, 'event stream client read nothing for SSE_IDLE_TIMEOUT_MS; disconnected');
      stop();
      reply.raw.destroy();
    };
    const outlet = createOutlet(out, abort.signal, idleTimeoutMs, drop);
    pumpEvents(deps, instanceId, lastEventId === undefined ? 0 : Number(lastEventId.trim()), outlet, abort.signal)
      .catch((error: unknown) => request.log.error({ err: error, instance_id: instanceId }, 'event stream failed'))
      .finally(() => {
        outlet.end();
        if (abort.signal.aborted) return;
        // The last bytes may still wait in buffers: a client that does not take them keeps its slot only so long.
        const timer = setTimeout(drop, idleTimeoutMs).unref();
        reply.raw.once('close', () => clearTimeout(timer));
      });
    return reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache, no-transform')
      .header('x-accel-buffering', 'no')
      // The declared 200 body is the stream's text; Fastify sends a stream as it comes.
      .send(out as unknown as string);
  });
};

export default eventRoutes;
