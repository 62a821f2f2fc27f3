// Anthropic's Messages stream to chat chunks: message_start gives the role chunk and the
// prompt's tokens, text_delta and input_json_delta become content and tool call pieces,
// message_delta the finish reason and output tokens, message_stop the usage chunk.
import { ShapeError, count, isObject, type Json } from './types.js';
import { StreamEventError, chunkOf, deltaChoice, type StreamChunk, type StreamReader, type StreamSupport } from '../stream/types.js';
import type { ChatRequest, FinishReason, Usage } from '../types.js';
import { messagesOrigin } from '../messages/types.js';

export interface AnthropicStreamOptions {
  finish: Record<string, FinishReason>;
  /** A JSON response_format is answered by a forced tool, whose input is streamed as content. */
  wantsJson(request: ChatRequest): boolean;
}

export function anthropicStream(options: AnthropicStreamOptions): StreamSupport {
  return {
    body: (vendorBody) => Object.assign({}, vendorBody, { stream: true }), // not a spread: see openai-stream.ts
    reader: (request) => withNativeEvents(anthropicReader(options, options.wantsJson(request)), messagesOrigin(request) !== undefined),
  };
}

/**
 * For a Messages request, every event also rides along as it came (`native` on its first chunk,
 * or on a chunk of its own), so the Messages route relays Anthropic's stream unchanged:
 * thinking, signatures and citations included.
 */
function withNativeEvents(reader: StreamReader, native: boolean): StreamReader {
  if (!native) return reader;
  return {
    get finished() {
      return reader.finished;
    },
    read(event) {
      const chunks = reader.read(event);
      const data: unknown = JSON.parse(event.data);
      if (chunks.length === 0) return [Object.assign(chunkOf([]), { native: data })];
      chunks[0]!.native = data;
      return chunks;
    },
    end: () => reader.end(),
    usage: () => reader.usage(),
  };
}

function anthropicReader(options: AnthropicStreamOptions, forcedJson: boolean): StreamReader {
  let finished = false;
  let prompt: Json | null = null;
  let output = 0;
  // Anthropic's block index -> the chat tool call index (-1: a text or forced-JSON block).
  const tools = new Map<number, number>();
  const text = (content: string) => [chunkOf([deltaChoice(0, { content })])];

  function usage(): Usage | null {
    if (!prompt) return null;
    // Cached prompt tokens are billed apart but are still prompt tokens.
    const read = count(prompt.cache_read_input_tokens);
    const promptTokens = count(prompt.input_tokens) + count(prompt.cache_creation_input_tokens) + read;
    const out: Usage = { prompt_tokens: promptTokens, completion_tokens: output, total_tokens: promptTokens + output };
    if (typeof prompt.cache_read_input_tokens === 'number') out.prompt_tokens_details = { cached_tokens: read };
    return out;
  }

  return {
    get finished() {
      return finished;
    },
    read(event): StreamChunk[] {
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        throw new ShapeError('an event is not valid JSON');
      }
      if (!isObject(data)) throw new ShapeError('an event is not a JSON object');
      switch (data.type) {
        case 'message_start': {
          const message = isObject(data.message) ? data.message : {};
          prompt = isObject(message.usage) ? message.usage : {};
          output = count(prompt.output_tokens);
          return [chunkOf([deltaChoice(0, { role: 'assistant', content: '' })])];
        }
        case 'content_block_start': {
          const block = isObject(data.content_block) ? data.content_block : {};
          const index = count(data.index);
          if (block.type !== 'tool_use' || forcedJson) {
            tools.set(index, -1);
            return typeof block.text === 'string' && block.text !== '' ? text(block.text) : [];
          }
          const position = [...tools.values()].filter((t) => t >= 0).length;
          tools.set(index, position);
          return [chunkOf([deltaChoice(0, { tool_calls: [{ index: position, id: String(block.id ?? ''), type: 'function', function: { name: String(block.name ?? ''), arguments: '' } }] })])];
        }
        case 'content_block_delta': {
          const delta = isObject(data.delta) ? data.delta : {};
          if (delta.type === 'text_delta' && typeof delta.text === 'string') return text(delta.text);
          if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
            const position = tools.get(count(data.index)) ?? -1;
            if (position < 0) return forcedJson ? text(delta.partial_json) : [];
            return [chunkOf([deltaChoice(0, { tool_calls: [{ index: position, function: { arguments: delta.partial_json } }] })])];
          }
          // Thinking and signature deltas are not part of the answer.
          return [];
        }
        case 'message_delta': {
          const delta = isObject(data.delta) ? data.delta : {};
          if (isObject(data.usage)) {
            output = count(data.usage.output_tokens);
            // Newer streams repeat the prompt's counts here; the latest report wins.
            if (typeof data.usage.input_tokens === 'number') prompt = { ...prompt, ...data.usage };
          }
          let finish = (typeof delta.stop_reason === 'string' ? options.finish[delta.stop_reason] : undefined) ?? 'stop';
          if (forcedJson && finish === 'tool_calls') finish = 'stop';
          return [chunkOf([deltaChoice(0, {}, finish)])];
        }
        case 'message_stop': {
          finished = true;
          const totals = usage();
          return totals ? [chunkOf([], totals)] : [];
        }
        case 'error': {
          const error = isObject(data.error) ? data.error : {};
          throw new StreamEventError(typeof error.message === 'string' ? error.message : 'the vendor sent an error event');
        }
        default:
          // ping, content_block_stop, and event types added later.
          return [];
      }
    },
    end() {
      if (!finished) throw new StreamEventError('the stream ended before message_stop', true);
      return [];
    },
    usage,
  };
}
