// POST /v1/responses with `stream: true`: the routed chat stream relayed as Responses events.
// As for streamed chat, everything that can fail before the first chunk (validation, quotas,
// every candidate failing) is a plain JSON answer; after it, a response.failed event.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import type { CallerSignal } from '../../abort-scope.js';
import type { StreamOutcome } from '../../metrics/recorder.js';
import type { RoutedStream } from '../../providers/stream/routed-stream.js';
import type { ChatRequest } from '../../providers/types.js';
import type { QuotaSubject } from '../../quotas/gate.js';
import { finishedResponse, responseShell, type ResponseMeta } from '../../responses/from-chat.js';
import { ResponseEvents } from '../../responses/stream-events.js';
import type { ResponseObject } from '../../schemas/responses.js';
import { estimatePromptTokens } from '../../usage/metering.js';
import { streamedUsage } from '../../usage/stream-metering.js';
import { inStreamError } from '../chat/stream.js';
import { openStream, startEventStream, streamOutcome } from '../chat/stream-opening.js';
import { ResponseEventWriter } from './event-writer.js';

export interface ResponseStreamContext {
  subject: QuotaSubject;
  meta: ResponseMeta;
  chatRequest: ChatRequest;
  /** Stores the response once it is over (a no-op with `store: false`). */
  save(response: ResponseObject): Promise<void>;
  log: FastifyBaseLogger;
}


export async function streamResponse(app: FastifyInstance, reply: FastifyReply, context: ResponseStreamContext): Promise<FastifyReply> {
  const { subject, chatRequest, log } = context;
  const { routed, meter, signal } = await openStream(app, reply, subject, chatRequest, log);
  const out = startEventStream(reply);
  const writer = new ResponseEventWriter(out, signal);
  void relay(routed, writer, context, signal, (usage, outcome) => meter.finish(routed.provider, usage, outcome))
    .then((outcome) => app.metrics.streamEnded(outcome), (error: unknown) => log.error({ err: error }, 'responses stream relay failed'))
    .finally(() => writer.end());
  return reply;
}

type Finish = (usage: ReturnType<typeof streamedUsage>, outcome: string) => void;

async function relay(routed: RoutedStream, writer: ResponseEventWriter, context: ResponseStreamContext, signal: CallerSignal, finish: Finish): Promise<StreamOutcome> {
  const { stream } = routed;
  const { meta, log } = context;
  const events = new ResponseEvents();
  let outcome = 'ok';
  let failure: { code: string; message: string } | null = null;
  try {
    await writer.write(events.start(responseShell(meta)));
    for (let chunk = await stream.read(); chunk !== null; chunk = await stream.read()) await writer.write(events.chunk(chunk));
    await writer.write(events.end());
  } catch (error) {
    if (signal.aborted) {
      outcome = 'client_closed_request';
      failure = { code: 'client_closed_request', message: 'The client closed the connection before the response was complete.' };
    } else {
      const cut = inStreamError(error);
      if (cut.code === 'internal_error') log.error({ err: error }, 'responses stream relay failed');
      else log.warn({ provider: routed.provider, code: cut.code, detail: cut.message }, 'stream cut after its first chunk');
      outcome = cut.code;
      failure = { code: 'server_error', message: cut.message };
    }
  } finally {
    stream.cancel();
  }
  const usage = streamedUsage(stream.usage(), stream.completed, stream.chars, estimatePromptTokens(context.chatRequest));
  finish(usage, outcome);
  if (failure) events.abandon();
  const response = finishedResponse(meta, events.output, events.finish, usage, Math.floor(Date.now() / 1000));
  if (failure) {
    Object.assign(response, { status: 'failed', incomplete_details: null, error: failure, completed_at: null });
    writer.final(events.last(response));
  } else {
    await writer.write([events.last(response)]).catch(() => undefined);
  }
  try {
    await context.save(response);
  } catch (error) {
    log.error({ err: error }, 'storing a streamed response failed');
  }
  return streamOutcome(outcome);
}
