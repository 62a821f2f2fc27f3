// The one writer of chat.completion.chunk events: each chunk gets the answer's id and model,
// usage is dropped unless the client asked for it, and every write is awaited, so a client
// that reads slowly slows the vendor read instead of filling memory.
import type { Writable } from 'node:stream';
import type { StreamChunk } from '../../providers/stream/types.js';
import { VerbatimChunk } from '../../providers/stream/verbatim-chunk.js';
import { forget, whenAborted, type CallerSignal } from '../../abort-scope.js';

export interface ChunkWriterOptions {
  id: string;
  /** The model name as requested. */
  model: string;
  /** Unix seconds, the same on every chunk. */
  created: number;
  /** `stream_options.include_usage`: keep the usage chunk (upstream is always asked for it). */
  includeUsage: boolean;
}

export interface StreamErrorBody {
  message: string;
  type: string;
  code: string;
}

export class ClientGoneError extends Error {
  override readonly name = 'ClientGoneError';
}

export class ChunkWriter {
  /** What a verbatim chunk's text is written after: the members the relay sets, as JSON.stringify writes them. */
  private readonly head: string;

  constructor(private readonly out: Writable, private readonly signal: CallerSignal, private readonly options: ChunkWriterOptions) {
    this.head = `{"id":${JSON.stringify(options.id)},"object":"chat.completion.chunk","created":${options.created},"model":${JSON.stringify(options.model)}`;
  }

  async chunk(chunk: StreamChunk): Promise<void> {
    const text = this.event(chunk);
    if (text !== '') await this.send(text);
  }

  /** Chunks that arrived together, in one write: one socket write (and TLS record) instead of one per chunk. */
  async chunks(batch: StreamChunk[]): Promise<void> {
    let text = '';
    for (const chunk of batch) text += this.event(chunk);
    if (text !== '') await this.send(text);
  }

  /** The chunk's event text with the answer's id and model, '' for a usage chunk the client did not ask for. */
  private event(chunk: StreamChunk): string {
    const { options } = this;
    if (chunk instanceof VerbatimChunk) return `data: ${this.head}${chunk.rest(options.includeUsage)}\n\n`;
    if (!options.includeUsage && chunk.usage !== undefined) {
      // The usage chunk (no choices) goes entirely; a usage riding on a content chunk goes alone.
      if (chunk.choices.length === 0) return '';
      delete chunk.usage;
    }
    chunk.id = options.id;
    chunk.object = 'chat.completion.chunk';
    chunk.created = options.created;
    chunk.model = options.model;
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }

  /** An SSE comment (`: text`), which clients ignore: keeps proxies from closing a quiet stream. Skipped while the client is behind. */
  comment(text: string): void {
    if (this.signal.aborted || this.out.writableEnded || this.out.writableNeedDrain) return;
    this.out.write(`: ${text}\n\n`);
  }

  /** A complete answer: `[DONE]`, then the end. */
  async done(): Promise<void> {
    await this.send('data: [DONE]\n\n');
    this.out.end();
  }

  /** OpenAI's in-stream error form; never followed by [DONE], so a cut answer cannot pass for a whole one. */
  fail(error: StreamErrorBody): void {
    if (this.signal.aborted || this.out.writableEnded) return;
    this.out.write(`data: ${JSON.stringify({ error: { message: error.message, type: error.type, code: error.code, param: null } })}\n\n`);
    this.out.end();
  }

  private send(text: string): Promise<void> | undefined {
    if (this.signal.aborted || this.out.destroyed) throw new ClientGoneError('the client closed the connection');
    if (this.out.write(text)) return undefined;
    return new Promise<void>((resolve) => {
      const done = () => {
        this.out.off('drain', done);
        this.out.off('close', done);
        forget(this.signal, done);
        resolve();
      };
      this.out.once('drain', done);
      this.out.once('close', done);
      whenAborted(this.signal, done);
    });
  }
}
