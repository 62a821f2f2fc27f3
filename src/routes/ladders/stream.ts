// POST /v1/{author}/{ladder}/chat/completions with `stream: true`: the run as server-sent
// chat.completion.chunk events. Whatever is refused before the run's instance exists is a plain
// JSON answer; from then on the stream is open: comments keep it alive while earlier steps run,
// the answer's last call is relayed as it comes when it can be (RunOptions.onAnswerDelta), else
// the answer is sent whole once known, and a failing run ends with the in-stream error event.
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../errors.js';
import { chunkOf, deltaChoice, type StreamChunk } from '../../providers/stream/types.js';
import type { RunRequest } from '../../services/ladder-runs.js';
import { ChunkWriter, type StreamErrorBody } from '../chat/chunk-writer.js';

export interface LadderStreamContext {
  /** The run to make; its signal and callbacks are the stream's. */
  run: Omit<RunRequest, 'signal' | 'onInstance' | 'onAnswerDelta'>;
  /** `author/slug`: every chunk's `model`. */
  name: string;
  /** `stream_options.include_usage`: a last chunk with the run's usage over all its calls. */
  includeUsage: boolean;
}

const textChunk = (text: string): StreamChunk => chunkOf([deltaChoice(0, { content: text })]);

export async function streamLadderRun(app: FastifyInstance, reply: FastifyReply, context: LadderStreamContext): Promise<FastifyReply> {
  const { run, name, includeUsage } = context;
  const log = reply.log;
  const abort = new AbortController();
  // A client that leaves cancels the run, as for a run answered whole.
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  const out = new PassThrough();
  let writer: ChunkWriter | null = null;
  let relayed = '';
  let opened!: () => void;
  const instanceReady = new Promise<void>((resolve) => (opened = resolve));
  const running = app.ladderRunner.runSync({
    ...run,
    signal: abort.signal,
    onInstance: (instance) => {
      reply.header('x-ladder-instance', instance.id);
      writer = new ChunkWriter(out, abort.signal, { id: `ldr-${instance.id}`, model: name, created: Math.floor(Date.now() / 1000), includeUsage });
      // The role chunk opens the answer at once, as OpenAI's first chunk does. (A client already
      // gone makes it reject: the run is being cancelled then, and nothing is left to tell.)
      writer.chunk(chunkOf([deltaChoice(0, { role: 'assistant', content: '' })])).catch(() => {});
      opened();
    },
    onAnswerDelta: (text) => {
      relayed += text;
      return writer!.chunk(textChunk(text));
    },
  });
  // Refused before its instance exists (quotas, allowedTargets, caps): the usual JSON error.
  await Promise.race([instanceReady, running]);
  const stream = writer!;
  const keepAlive = setInterval(() => stream.comment('keep-alive'), app.config.events.keepAliveMs);
  void answer(running, stream, () => relayed, abort.signal).then(
    (failure) => {
      if (failure?.code === 'internal_error') log.error({ err: failure.cause }, 'ladder stream failed');
      else if (failure) log.info({ code: failure.code }, 'ladder stream ended with an error event');
    },
  ).finally(() => {
    clearInterval(keepAlive);
    if (!out.writableEnded) out.end();
  });
  return reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache, no-transform')
    .header('x-accel-buffering', 'no')
    .send(out);
}

/**
 * Once the run ends: what was not relayed of the answer (all of it when no call could stream),
 * the finish chunk, the usage, [DONE]; or the error event. Resolves with the error sent, if any.
 */
async function answer(
  running: ReturnType<FastifyInstance['ladderRunner']['runSync']>,
  writer: ChunkWriter,
  relayed: () => string,
  signal: AbortSignal,
): Promise<(StreamErrorBody & { cause: unknown }) | null> {
  try {
    const { result } = await running;
    const sent = relayed();
    const rest = result.answer.startsWith(sent) ? result.answer.slice(sent.length) : '';
    if (rest !== '') await writer.chunk(textChunk(rest));
    await writer.chunk(chunkOf([deltaChoice(0, {}, 'stop')]));
    await writer.chunk(chunkOf([], result.usage));
    await writer.done();
    return null;
  } catch (error) {
    // A client that left cancelled the run: nobody to tell.
    if (signal.aborted) return null;
    const failure = error instanceof ApiError
      ? { message: error.message, type: error.type, code: error.code, cause: error }
      : { message: 'The server had an error while running the ladder.', type: 'api_error', code: 'internal_error', cause: error };
    writer.fail(failure);
    return failure;
  }
}
