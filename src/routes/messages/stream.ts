// POST /v1/messages with `stream: true`: the routed stream written as Anthropic's events. As on
// chat: what fails before the first chunk (auth, validation, quotas, every candidate) is a plain
// answer (here in Anthropic's error shape); after it, one `error` event and no message_stop.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import type { CallerSignal } from '../../abort-scope.js';
import type { StreamOutcome } from '../../metrics/recorder.js';
import type { RoutedStream } from '../../providers/stream/routed-stream.js';
import type { ChatRequest } from '../../providers/types.js';
import type { QuotaSubject } from '../../quotas/gate.js';
import { estimatePromptTokens } from '../../usage/metering.js';
import { streamedUsage, type StreamMeter } from '../../usage/stream-metering.js';
import { inStreamError } from '../chat/stream.js';
import { openStream, startEventStream, streamOutcome } from '../chat/stream-opening.js';
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
  const { routed, meter, signal } = await openStream(app, reply, subject, chatRequest, log);
  const out = startEventStream(reply);
  const writer = new MessagesEventWriter(out, signal, { id: messageId(), model: context.model });
  void relay(routed, writer, meter, signal, estimatePromptTokens(chatRequest), log).then(
    (outcome) => app.metrics.streamEnded(outcome),
    (error: unknown) => log.error({ err: error }, 'stream relay failed'),
  ).finally(() => {
    if (!out.writableEnded) out.end();
  });
  return reply;
}

async function relay(routed: RoutedStream, writer: MessagesEventWriter, meter: StreamMeter, signal: CallerSignal, promptEstimate: number, log: FastifyBaseLogger): Promise<StreamOutcome> {
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
  return streamOutcome(outcome);
}
