// OpenAI-compatible streams are already the internal chunk shape: each `data:` chunk is relayed
// as it is (the writer rewrites only id and model); finish reasons and usage are normalised.
// Text deltas, most of a stream, stay text (verbatim-chunk.ts); the others are parsed.
import { StreamEventError, type StreamChunk, type StreamReader, type StreamSupport } from '../stream/types.js';
import { verbatimChunk, type VerbatimChunk } from '../stream/verbatim-chunk.js';
import type { Usage } from '../types.js';
import { ShapeError, isObject } from './types.js';
import { FINISH, openAIErrorMessage, parseOpenAIUsage } from './openai-wire.js';

/** `askUsage`: send `stream_options.include_usage` (vendors that refuse unknown members get false). */
export function openAIStream(askUsage: boolean): StreamSupport {
  return {
    // Usage is always asked for, so every streamed call is metered; the writer drops it when the client did not ask.
    // Object.assign rather than a spread: Node 20's V8 builds `{ ...body, more }` on a slow path (µs per stream).
    body: (vendorBody) => Object.assign({}, vendorBody, askUsage ? { stream: true, stream_options: { include_usage: true } } : { stream: true }),
    reader: openAIReader,
  };
}

function openAIReader(): StreamReader {
  let finished = false;
  let sawFinish = false;
  let usage: Usage | null = null;
  let last: VerbatimChunk | null = null;
  return {
    get finished() {
      return finished;
    },
    read(event) {
      if (event.data === '[DONE]') {
        finished = true;
        return [];
      }
      const verbatim = verbatimChunk(event.data, last);
      if (verbatim) {
        last = verbatim;
        return [verbatim];
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch {
        throw new ShapeError('an event is not valid JSON');
      }
      if (!isObject(chunk)) throw new ShapeError('an event is not a JSON object');
      if (chunk.error !== undefined && chunk.error !== null) throw new StreamEventError(openAIErrorMessage(chunk) ?? 'the vendor sent an error event');
      if (!Array.isArray(chunk.choices)) throw new ShapeError('a chunk has no choices array');
      if (isObject(chunk.usage)) chunk.usage = usage = parseOpenAIUsage(chunk.usage);
      for (const choice of chunk.choices) {
        if (!isObject(choice) || !isObject(choice.delta)) throw new ShapeError('a chunk choice has no delta');
        if (typeof choice.finish_reason === 'string') {
          sawFinish = true;
          // Self-hosted servers sometimes use their own words for a normal end.
          choice.finish_reason = FINISH[choice.finish_reason] ?? 'stop';
        }
      }
      return [chunk as StreamChunk];
    },
    end() {
      // Some compatible servers end without [DONE]; a finish reason is then proof enough of a whole answer.
      if (!finished && !sawFinish) throw new StreamEventError('the stream ended before the answer was complete', true);
      return [];
    },
    usage: () => usage,
  };
}
