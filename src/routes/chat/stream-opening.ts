// What every streamed answer (chat chunks, Anthropic's Messages events, Responses events) does
// before its first event and around its relay: the caller's disconnect wired to the vendor call,
// metering opened, the routed stream with its routing headers, the event-stream reply, and the
// relay's outcome as the metrics name it. Failures up to the first event are thrown, so each
// route answers them plainly in its own error shape.
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import type { CallerGone } from '../../abort-scope.js';
import { ApiError, clientClosedRequest } from '../../errors.js';
import type { StreamOutcome } from '../../metrics/recorder.js';
import { ProviderRouteError } from '../../providers/router.js';
import type { RoutedStream } from '../../providers/stream/routed-stream.js';
import type { ChatRequest } from '../../providers/types.js';
import type { QuotaSubject } from '../../quotas/gate.js';
import type { StreamMeter } from '../../usage/stream-metering.js';
import { setRoutingHeaders, setTextHeader } from './completion.js';
import { goneWhenClosed } from '../caller-gone.js';

export interface OpenedStream {
  routed: RoutedStream;
  meter: StreamMeter;
  /** Aborted when the client leaves: the relay stops and the vendor connection closes. */
  signal: CallerGone;
}

/** Routes the call and sets the answer's routing and metering headers; throws what fails before a first chunk. */
export async function openStream(app: FastifyInstance, reply: FastifyReply, subject: QuotaSubject, chatRequest: ChatRequest, log: FastifyBaseLogger): Promise<OpenedStream> {
  const gone = goneWhenClosed(reply.raw);
  const meter = await app.metering.streamed(subject, chatRequest);
  let routed: RoutedStream;
  try {
    routed = await app.streamModel(subject.accountId, meter.request, gone, log);
  } catch (error) {
    meter.finish(null, null, error instanceof ApiError ? error.code : 'internal_error');
    if (error instanceof ProviderRouteError) setRoutingHeaders(reply, error.attempts, error.upstreamMs);
    if (gone.aborted) throw clientClosedRequest();
    throw error;
  }
  setRoutingHeaders(reply, routed.attempts, routed.upstreamMs, routed.provider);
  setTextHeader(reply, 'x-ladder-model', routed.model);
  reply.headers(meter.headers());
  app.metrics.streamStarted(routed.provider, reply.elapsedTime / 1000);
  return { routed, meter, signal: gone };
}

/**
 * The reply as server-sent events, unbuffered by proxies: the response itself, which the relay
 * writes. Written straight to the response rather than through a stream fastify pipes into it:
 * the first event leaves in the relay's own write (with the head, which Node holds until then)
 * instead of a tick later, and no event goes through a Transform (CHANGELOG, Unreleased, has the
 * figures). fastify still logs the request and runs its onResponse hooks.
 */
export function startEventStream(reply: FastifyReply): ServerResponse {
  reply.hijack();
  const response = reply.raw;
  // The routing and rate-limit headers openStream set on the reply, which fastify no longer sends.
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
  response.setHeader('content-type', 'text/event-stream; charset=utf-8');
  response.setHeader('cache-control', 'no-cache, no-transform');
  response.setHeader('x-accel-buffering', 'no');
  return response.writeHead(200);
}

const OUTCOMES: Record<string, StreamOutcome> = {
  ok: 'completed',
  client_closed_request: 'client_closed',
  stream_timeout: 'timeout',
  internal_error: 'internal_error',
};

/** A relay's ending (`ok` or an error code) as the stream-outcome metric counts it. */
export function streamOutcome(code: string): StreamOutcome {
  return OUTCOMES[code] ?? 'upstream_error';
}
