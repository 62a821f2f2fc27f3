// GET /v1/pipelines/instances/{id}/events: the run's events as Server-Sent Events, for its
// owner. Format, resumption and limits: docs/pipelines-events.md.
import { PassThrough } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ApiError, invalidRequest, notFound } from '../../errors.js';
import { errorResponses } from '../../schemas/common.js';
import { EVENT_STREAM_DESCRIPTION, EventStreamHeadersSchema } from '../../schemas/pipeline-events.js';
import { InstanceParamsSchema } from '../../schemas/pipelines.js';
import { pumpEvents } from './event-stream.js';
import * as ex from '../../schemas/examples.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EVENT_ID_RE = /^(0|[1-9][0-9]{0,9})$/;

export const instanceNotFound = (id: string) => notFound('instance_not_found', `Instance "${id}" was not found.`);

const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { maxStreams, pollMs, keepAliveMs } = app.config.events;
  const deps = { events: app.instanceEvents, instances: app.instances, wakeups: app.eventWakeups, pollMs, keepAliveMs };
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
        ...errorResponses(400, 401, 404, 503),
      },
    },
  }, async (request, reply) => {
    const { id } = request.params;
    const instance = UUID_RE.test(id) ? await app.instances.get(id.toLowerCase()) : null;
    if (!instance || instance.accountId !== request.principal.accountId) throw instanceNotFound(id);
    const lastEventId = request.headers['last-event-id'];
    if (lastEventId !== undefined && !EVENT_ID_RE.test(lastEventId.trim())) {
      throw invalidRequest('invalid_last_event_id', 'Last-Event-ID must be an event id this stream sent (a whole number).', 'Last-Event-ID');
    }
    if (open.size >= maxStreams) {
      throw new ApiError(503, 'api_error', 'too_many_streams', 'This server is serving as many event streams as it may; retry shortly.', null, { 'retry-after': '5' });
    }

    const abort = new AbortController();
    open.add(abort);
    const out = new PassThrough();
    const stop = () => {
      abort.abort();
      open.delete(abort);
    };
    reply.raw.once('close', stop);
    out.once('close', stop);
    pumpEvents(deps, instance, lastEventId === undefined ? 0 : Number(lastEventId.trim()), out, abort.signal)
      .catch((error: unknown) => request.log.error({ err: error, instance_id: instance.id }, 'event stream failed'))
      .finally(() => {
        stop();
        if (!out.writableEnded) out.end();
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
