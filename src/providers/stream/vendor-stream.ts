// A vendor's event stream once it answers 200: pulled one chunk at a time by the writer, so a
// slow client slows the socket read (backpressure by awaiting, no queue beyond one network
// read's chunks). Bounded by an idle limit between reads and a maximum duration; every
// failure leaves as a VendorError, as a whole answer's would.
import { ShapeError } from '../adapters/types.js';
import type { Usage } from '../types.js';
import { VendorError, redact, transportError } from '../vendor-errors.js';
import { SseDecoder, SseDecoderError } from './sse-decoder.js';
import type { StreamGuard } from './stream-guard.js';
import { StreamEventError, type StreamChunk, type StreamReader } from './types.js';
import { VerbatimChunk } from './verbatim-chunk.js';

export interface VendorStreamInit {
  provider: string;
  body: AsyncIterable<Uint8Array> & { destroy(error?: Error): unknown };
  reader: StreamReader;
  /** The opener's: its limits run on, and the stream ends it however it ends. */
  guard: StreamGuard;
  /** Largest single event, in characters. */
  maxEventChars: number;
  /** Vendor text is not repeated for user endpoints, and never with the key in it. */
  opaque: boolean;
  apiKey: string;
}

export class VendorStream {
  /** True once the vendor ended the answer properly. */
  completed = false;
  /** Characters of text, refusal and tool arguments relayed: the estimate for a stream cut before its usage. */
  chars = 0;
  private readonly iterator: AsyncIterator<Uint8Array>;
  private readonly decoder: SseDecoder;
  private queue: StreamChunk[] = [];
  private next = 0;
  private ended = false;
  private failed: VendorError | null = null;
  private endListener: ((failure: VendorError | null) => void) | null = null;

  constructor(private readonly init: VendorStreamInit) {
    this.iterator = init.body[Symbol.asyncIterator]();
    this.decoder = new SseDecoder(init.maxEventChars);
  }

  /** Reads until the first chunk is in hand: until then (nothing sent yet) a failure may still fall back. */
  async open(): Promise<void> {
    while (this.queue.length === 0 && !this.ended) await this.fill();
    if (this.failed) throw this.failed;
    if (!this.ended) this.init.guard.flowing();
  }

  /** Reads until a chunk is in hand (true) or the stream has ended properly (false); throws when it failed. */
  private async inHand(): Promise<boolean> {
    while (this.next === this.queue.length) {
      if (this.failed) throw this.failed;
      if (this.ended) return false;
      this.queue = [];
      this.next = 0;
      await this.fill();
    }
    return true;
  }

  /** The next chunk, null at the proper end. Throws a VendorError when the stream fails, after the chunks read before it. */
  async read(): Promise<StreamChunk | null> {
    // Only a reader that has used up its chunks awaits: the common case stays synchronous.
    if (this.next === this.queue.length && !(await this.inHand())) return null;
    const chunk = this.queue[this.next++]!;
    this.count(chunk);
    return chunk;
  }

  /**
   * Every chunk in hand (those of one network read), at least one; null at the proper end.
   * For a relay that writes them in one socket write: the same chunks as read() would give,
   * without a wait between them.
   */
  async readBatch(): Promise<StreamChunk[] | null> {
    // Only a reader that has used up its chunks awaits: the common case stays synchronous.
    if (this.next === this.queue.length && !(await this.inHand())) return null;
    const batch = this.next === 0 ? this.queue : this.queue.slice(this.next);
    this.queue = [];
    this.next = 0;
    for (const chunk of batch) this.count(chunk);
    return batch;
  }

  /** True once the vendor sent its own end ([DONE], message_stop) and every chunk before it was handed out: only the body's end, or a failure, is left. */
  get drained(): boolean {
    return this.init.reader.finished && this.next === this.queue.length;
  }

  /** The vendor's report so far (maybe only the prompt), null when it reported nothing. */
  usage(): Usage | null {
    return this.init.reader.usage();
  }

  /**
   * Calls `listener` once the stream has ended, however it ended (at once if it has): with its
   * failure, or null for the vendor's proper end (`completed`) or a cancel. For a tracer's span.
   */
  onEnd(listener: (failure: VendorError | null) => void): void {
    if (this.ended) listener(this.failed);
    else this.endListener = listener;
  }

  /** Stops reading and closes the vendor connection (the client left, or the writer failed). */
  cancel(): void {
    if (this.ended) return;
    this.ended = true;
    this.stop();
    this.init.body.destroy();
  }

  private async fill(): Promise<void> {
    const { reader } = this.init;
    try {
      const { value, done } = await this.iterator.next();
      if (done) {
        for (const event of this.decoder.end()) if (!reader.finished) this.queue.push(...reader.read(event));
        if (!reader.finished) this.queue.push(...reader.end());
        this.completed = true;
        this.ended = true;
        this.stop();
        return;
      }
      this.init.guard.read();
      // Events after the vendor's own end are left unread; the body ends right after them.
      for (const event of this.decoder.push(value)) if (!reader.finished) this.queue.push(...reader.read(event));
    } catch (error) {
      // Kept until the chunks read before it are handed out.
      this.failed = this.failure(error);
      this.ended = true;
      this.stop();
      this.init.body.destroy();
    }
  }

  private count(chunk: StreamChunk): void {
    if (chunk instanceof VerbatimChunk) {
      this.chars += chunk.chars;
      return;
    }
    for (const choice of chunk.choices) {
      const delta = choice.delta;
      if (typeof delta.content === 'string') this.chars += delta.content.length;
      if (typeof delta.refusal === 'string') this.chars += delta.refusal.length;
      if (delta.tool_calls) for (const call of delta.tool_calls) this.chars += call.function?.arguments?.length ?? 0;
    }
  }

  private stop(): void {
    this.init.guard.end();
    this.endListener?.(this.failed);
    this.endListener = null;
  }

  private failure(error: unknown): VendorError {
    const { provider, guard } = this.init;
    if (error instanceof VendorError) return error;
    if (guard.stop.aborted) return guard.error(provider);
    if (error instanceof StreamEventError) {
      if (error.cut) return transportError(provider, 'connection', error.message, 200);
      const detail = this.init.opaque ? 'the stream reported an error' : `the stream reported an error: ${redact(error.message, this.init.apiKey)}`;
      return new VendorError({ provider, kind: 'server', status: 200, detail });
    }
    if (error instanceof ShapeError || error instanceof SseDecoderError) return transportError(provider, 'bad_response', `unreadable stream event: ${error.message}`, 200);
    // The socket died under the body: undici says "terminated" or "other side closed".
    return transportError(provider, 'connection', 'the stream was cut before the answer was complete', 200);
  }
}
