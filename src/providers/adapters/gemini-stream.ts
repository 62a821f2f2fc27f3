// Gemini's `streamGenerateContent?alt=sse` to chat chunks: each event is a whole
// GenerateContentResponse holding the next text pieces (or whole functionCall parts), a
// finishReason on the last one, and usageMetadata counted from the start (the latest wins).
// The stream has no end marker: the body simply ends.
import { randomUUID } from 'node:crypto';
import { ShapeError, count, isObject, usageOf, withDetails } from './types.js';
import { StreamEventError, chunkOf, deltaChoice, type StreamChunk, type StreamReader, type StreamSupport } from '../stream/types.js';
import type { FinishReason, Usage } from '../types.js';

export function geminiStream(finish: Record<string, FinishReason>): StreamSupport {
  return {
    body: (vendorBody) => vendorBody,
    path: (basePath, vendorModel) => `${basePath}/v1beta/models/${encodeURIComponent(vendorModel)}:streamGenerateContent?alt=sse`,
    reader: () => geminiReader(finish),
  };
}

function geminiReader(finishes: Record<string, FinishReason>): StreamReader {
  let usage: Usage | null = null;
  let ended = false;
  // Per candidate index: role sent, tool calls made so far.
  const started = new Set<number>();
  const calls = new Map<number, number>();

  function candidateChunks(candidate: unknown, position: number): StreamChunk[] {
    if (!isObject(candidate)) throw new ShapeError('candidate is not an object');
    const index = typeof candidate.index === 'number' ? candidate.index : position;
    const out: StreamChunk[] = [];
    if (!started.has(index)) {
      started.add(index);
      out.push(chunkOf([deltaChoice(index, { role: 'assistant', content: '' })]));
    }
    const parts = isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
    for (const part of parts) {
      if (!isObject(part)) continue;
      if (typeof part.text === 'string' && part.text !== '' && part.thought !== true) out.push(chunkOf([deltaChoice(index, { content: part.text })]));
      const call = part.functionCall;
      if (isObject(call) && typeof call.name === 'string') {
        const n = calls.get(index) ?? 0;
        calls.set(index, n + 1);
        // Gemini rarely gives call ids; one is made up only then.
        const id = typeof call.id === 'string' && call.id ? call.id : `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
        out.push(chunkOf([deltaChoice(index, { tool_calls: [{ index: n, id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } }] })]));
      }
    }
    if (typeof candidate.finishReason === 'string') {
      const mapped = finishes[candidate.finishReason];
      const finish = calls.has(index) && (mapped === undefined || mapped === 'stop') ? 'tool_calls' : mapped ?? 'stop';
      ended = true;
      out.push(chunkOf([deltaChoice(index, {}, finish)]));
    }
    return out;
  }

  return {
    finished: false,
    read(event) {
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        throw new ShapeError('an event is not valid JSON');
      }
      if (!isObject(data)) throw new ShapeError('an event is not a JSON object');
      if (isObject(data.error)) throw new StreamEventError(typeof data.error.message === 'string' ? data.error.message : 'the vendor sent an error event');
      const meta = data.usageMetadata;
      if (isObject(meta)) {
        // Thinking models bill their thoughts as output without returning them.
        const completion = count(meta.candidatesTokenCount) + count(meta.thoughtsTokenCount);
        usage = withDetails(usageOf(meta.promptTokenCount, completion, meta.totalTokenCount), meta.cachedContentTokenCount, meta.thoughtsTokenCount);
      }
      const candidates = Array.isArray(data.candidates) ? data.candidates : [];
      if (candidates.length === 0 && isObject(data.promptFeedback) && data.promptFeedback.blockReason !== undefined) {
        // A prompt blocked before generation: no candidates, only the feedback.
        ended = true;
        return [chunkOf([deltaChoice(0, { role: 'assistant', content: '' }, 'content_filter')])];
      }
      return candidates.flatMap(candidateChunks);
    },
    end() {
      if (!ended) throw new StreamEventError('the stream ended before a finish reason', true);
      return usage ? [chunkOf([], usage)] : [];
    },
    usage: () => usage,
  };
}
