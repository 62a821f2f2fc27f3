// POST /v1/chat/completions with `stream: true`: the routed stream relayed chunk by chunk as
// server-sent events. Everything that can fail before the first chunk (auth, validation,
// quotas, every candidate failing) is a plain JSON answer; after it, one in-stream error event.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import type { CallerSignal } from '../../abort-scope.js';
import type { StreamOutcome } from '../../metrics/recorder.js';
import type { RoutedStream } from '../../providers/stream/routed-stream.js';
import type { ChatRequest } from '../../providers/types.js';
import { VendorError } from '../../providers/vendor-errors.js';
import type { QuotaSubject } from '../../quotas/gate.js';
import type { DirectChatRequest } from '../../schemas/chat.js';
import { estimatePromptTokens } from '../../usage/metering.js';
import { streamedUsage, type StreamMeter } from '../../usage/stream-metering.js';
import { ChunkWriter, type StreamErrorBody } from './chunk-writer.js';
import { openStream, startEventStream, streamOutcome } from './stream-opening.js';

export interface StreamContext {
  subject: QuotaSubject;
  body: DirectChatRequest;
  chatRequest: ChatRequest;
  log: FastifyBaseLogger;
}

export async function streamChatCompletion(app: FastifyInstance, reply: FastifyReply, context: StreamContext): Promise<FastifyReply> {
  const { subject, body, chatRequest, log } = context;
  const { routed, meter, signal } = await openStream(app, reply, subject, chatRequest, log);
  const out = startEventStream(reply);
  const writer = new ChunkWriter(out, signal, {
    id: `ldr-chat-${randomUUID()}`,
    model: body.model,
    created: Math.floor(Date.now() / 1000),
    includeUsage: body.stream_options?.include_usage === true,
  });
  void relay(routed, writer, reply.raw, meter, signal, estimatePromptTokens(chatRequest), log).then(
    (outcome) => app.metrics.streamEnded(outcome),
    (error: unknown) => log.error({ err: error }, 'stream relay failed'),
  ).finally(() => {
    if (!out.writableEnded) out.end();
  });
  return reply;
}

/** Vendor chunks to the client, one network read at a time; settles the metering however it ends. */
async function relay(routed: RoutedStream, writer: ChunkWriter, response: ServerResponse, meter: StreamMeter, signal: CallerSignal, promptEstimate: number, log: FastifyBaseLogger): Promise<StreamOutcome> {
  const { stream } = routed;
  let outcome = 'ok';
  try {
    for (let batch = await stream.readBatch(); batch !== null; batch = await stream.readBatch()) {
      // The vendor's last chunks: held (one event-loop turn at most) for [DONE] and the response's end, so all leave in one write.
      if (stream.drained) holdLastWrite(response);
      await writer.chunks(batch);
    }
    await writer.done();
  } catch (error) {
    if (signal.aborted) outcome = 'client_closed_request';
    else {
      const failure = inStreamError(error);
      if (failure.code === 'internal_error') log.error({ err: error }, 'stream relay failed');
      else log.warn({ provider: routed.provider, code: failure.code, detail: failure.message }, 'stream cut after its first chunk');
      outcome = failure.code;
      writer.fail(failure);
    }
  } finally {
    stream.cancel();
    meter.finish(routed.provider, streamedUsage(stream.usage(), stream.completed, stream.chars, promptEstimate), outcome);
  }
  return streamOutcome(outcome);
}

/**
 * Corks the client's socket until the response ends (Node's end() uncorks it fully) or the next
 * event-loop turn, whichever comes first: the body's end is normally in the same network read
 * as the vendor's [DONE], and the last chunks, [DONE] and the chunked end then cost one socket
 * write (and TLS record) instead of three. A vendor slow to close waits no more than a turn.
 */
function holdLastWrite(response: ServerResponse): void {
  const socket = response.socket;
  if (!socket || socket.destroyed) return;
  socket.cork();
  setImmediate(() => {
    if (socket.writableCorked > 0) socket.uncork();
  });
}


/** A failure after the first chunk, as the error event says it (no switch to another vendor any more). */
export function inStreamError(error: unknown): StreamErrorBody {
  if (!(error instanceof VendorError)) return { message: 'The server had an error while streaming the response.', type: 'api_error', code: 'internal_error' };
  const code = error.kind === 'timeout' ? 'stream_timeout' : error.kind === 'server' ? 'upstream_stream_error' : 'upstream_stream_interrupted';
  return { message: `The stream was cut before the answer was complete: ${error.message}.`, type: 'upstream_error', code };
}
