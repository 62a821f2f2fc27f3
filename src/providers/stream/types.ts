// The one internal chunk shape every vendor's stream is mapped to: OpenAI's
// chat.completion.chunk, whose id, object, created and model the writer fills in.
import type { ChatRequest, FinishReason, Usage } from '../types.js';

/** One event of a text/event-stream body (comments, ids and retry fields are dropped). */
export interface SseEvent {
  /** The `event:` field, '' when absent. */
  event: string;
  data: string;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string | null;
  refusal?: string | null;
  tool_calls?: ToolCallDelta[];
  [member: string]: unknown;
}

export interface ChunkChoice {
  index: number;
  delta: ChunkDelta;
  logprobs?: unknown;
  finish_reason: FinishReason | null;
  [member: string]: unknown;
}

export interface StreamChunk {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  system_fingerprint?: string;
  choices: ChunkChoice[];
  /** Only on the last chunk (with `choices: []`); null or absent on the others. */
  usage?: Usage | null;
  [member: string]: unknown;
}

/** Reads one vendor's events into chunks; one reader per stream (it keeps the stream's state). */
export interface StreamReader {
  /** The chunks one vendor event gives (often one, sometimes none). Throws StreamEventError or ShapeError. */
  read(event: SseEvent): StreamChunk[];
  /** At the end of the body: the last chunks (e.g. a usage chunk). Throws StreamEventError when the vendor stopped before its end. */
  end(): StreamChunk[];
  /** True once the vendor sent its own end ([DONE], message_stop): nothing after it is read. */
  readonly finished: boolean;
  /** The tokens the vendor reported so far (maybe only the prompt's), null when none yet. */
  usage(): Usage | null;
}

/** What an adapter adds to stream: the body change, maybe another path, and its event reader. */
export interface StreamSupport {
  /** The streaming request body, from the adapter's ordinary one. */
  body(vendorBody: Record<string, unknown>): unknown;
  /** The streaming endpoint, when it is not the ordinary one (Gemini). */
  path?(basePath: string, vendorModel: string): string;
  reader(request: ChatRequest): StreamReader;
}

/** A vendor's in-stream error event (`{"error": …}`, Anthropic's `event: error`), or its stream stopping short. */
export class StreamEventError extends Error {
  override readonly name = 'StreamEventError';
  constructor(message: string, readonly cut = false) {
    super(message);
  }
}

/** A chunk with the members in OpenAI's order; the writer fills in the first four. */
export function chunkOf(choices: ChunkChoice[], usage?: Usage): StreamChunk {
  const chunk: StreamChunk = { id: '', object: 'chat.completion.chunk', created: 0, model: '', choices };
  if (usage) chunk.usage = usage;
  return chunk;
}

export function deltaChoice(index: number, delta: ChunkDelta, finish: FinishReason | null = null): ChunkChoice {
  return { index, delta, logprobs: null, finish_reason: finish };
}
