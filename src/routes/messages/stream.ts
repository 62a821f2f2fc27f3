// POST /v1/messages with `stream: true`: the routed stream written as Anthropic's events. As on
// chat: what fails before the first chunk (auth, validation, quotas, every candidate) is a plain
// answer (here in Anthropic's error shape); after it, one `error` event and no message_stop.
import { PassThrough } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import { ApiError, clientClosedRequest } from '../../errors.js';
import type { StreamOutcome } from '../../metrics/recorder.js';
import { ProviderRouteError } from '../../providers/router.js';
import type { RoutedStream } from '../../providers/stream/routed-stream.js';
import type { ChatRequest } from '../../providers/types.js';
import type { QuotaSubject } from '../../quotas/gate.js';
import { estimatePromptTokens } from '../../usage/metering.js';
import { streamedUsage, type StreamMeter } from '../../usage/stream-metering.js';
import { setRoutingHeaders, setTextHeader } from '../chat/completion.js';
import { inStreamError } from '../chat/stream.js';
import { messageId } from './answer.js';
import { MessagesEventWriter } from './event-writer.js';

export interface MessagesStreamContext {
  subject: QuotaSubject;
  model: string;
  chatRequest: ChatRequest;
  log: FastifyBaseLogger;
}

export async function streamMessage(app: FastifyInstance, reply: FastifyReply, context: MessagesStreamContext): Promise<FastifyReply> {
  const { subject, chatRequest, log } = context;
  const abort = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  const meter = await app.metering.streamed(subject, chatRequest);
  let routed: RoutedStream;
  try {
    routed = await app.streamModel(subject.accountId, meter.request, abort.signal, log);
  } catch (error) {
    meter.finish(null, null, error instanceof ApiError ? error.code : 'internal_error');
    if (error instanceof ProviderRouteError) setRoutingHeaders(reply, error.attempts, error.upstreamMs);
    if (abort.signal.aborted) throw clientClosedRequest();
    throw error;
  }
  setRoutingHeaders(reply, routed.attempts, routed.upstreamMs, routed.provider);
  setTextHeader(reply, 'x-ladder-model', routed.model);
  reply.headers(meter.headers());
  const out = new PassThrough();
  const writer = new MessagesEventWriter(out, abort.signal, { id: messageId(), model: context.model });
  app.metrics.streamStarted(routed.provider, reply.elapsedTime / 1000);
  void relay(routed, writer, meter, abort.signal, estimatePromptTokens(chatRequest), log).then(
    (outcome) => app.metrics.streamEnded(outcome),
    (error: unknown) => log.error({ err: error }, 'stream relay failed'),
  ).finally(() => {
    if (!out.writableEnded) out.end();
  });
  return reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache, no-transform')
    .header('x-accel-buffering', 'no')
    .send(out);
}

const OUTCOMES: Record<string, StreamOutcome> = {
  ok: 'completed',
  client_closed_request: 'client_closed',
  stream_timeout: 'timeout',
  internal_error: 'internal_error',
};

async function relay(routed: RoutedStream, writer: MessagesEventWriter, meter: StreamMeter, signal: AbortSignal, promptEstimate: number, log: FastifyBaseLogger): Promise<StreamOutcome> {
  const { stream } = routed;
  let outcome = 'ok';
  try {
    for (let chunk = await stream.read(); chunk !== null; chunk = await stream.read()) await writer.chunk(chunk);
    await writer.done();
  } catch (error) {
    if (signal.aborted) outcome = 'client_closed_request';
    else {
      const failure = inStreamError(error);
      if (failure.code === 'internal_error') log.error({ err: error }, 'stream relay failed');
      else log.warn({ provider: routed.provider, code: failure.code, detail: failure.message }, 'stream cut after its first chunk');
      outcome = failure.code;
      // Anthropic's types: a timeout is timeout_error, a vendor failure overloaded_error (retryable), ours api_error.
      writer.fail(failure.code === 'stream_timeout' ? 504 : failure.code === 'internal_error' ? 500 : 503, failure.message);
    }
  } finally {
    stream.cancel();
    meter.finish(routed.provider, streamedUsage(stream.usage(), stream.completed, stream.chars, promptEstimate), outcome);
  }
  return OUTCOMES[outcome] ?? 'upstream_error';
}
