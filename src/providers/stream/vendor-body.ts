// A vendor's streamed answer read straight off undici's `dispatch`, as collect-body.ts reads a
// whole one: the status, the raw headers, then the body's bytes handed to one reader. undici's
// `request` wraps the body in a Readable (an async resource, an abort listener, an async
// iterator, a nextTick between a network read and its reader) that cost a stream's first token
// about as much as the rest of its opening (docs/performance.md, Streaming).
import type { Dispatcher } from 'undici';
import { whenAborted, type CallerSignal } from '../../abort-scope.js';
import { DispatchExchange } from '../dispatch-exchange.js';

/** Bytes held for a reader that is behind before the vendor's socket is paused (undici's Readable holds as much). */
const HIGH_WATER = 64 * 1024;

interface Waiter {
  resolve(result: IteratorResult<Uint8Array>): void;
  reject(error: unknown): void;
}

export class VendorBody extends DispatchExchange implements AsyncIterable<Uint8Array>, AsyncIterator<Uint8Array> {
  /** Settles when the status and headers came (a final status, not 1xx), or with what failed before them. */
  readonly head: Promise<void>;
  status = 0;
  rawHeaders: Array<Buffer | string> = [];
  private headResolve!: () => void;
  private headReject!: (error: unknown) => void;
  private resume: (() => void) | null = null;
  private paused = false;
  private chunks: Buffer[] = [];
  private size = 0;
  private complete = false;
  private error: unknown = null;
  private waiter: Waiter | null = null;
  private waking = false;

  /** `signal` aborts the exchange at any point; the reader then gets undici's abort error. */
  constructor(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: CallerSignal) {
    super();
    this.head = new Promise((resolve, reject) => {
      this.headResolve = resolve;
      this.headReject = reject;
    });
    // Nobody may be waiting for the head when a failure comes later: that rejection is the reader's.
    this.head.catch(() => {});
    whenAborted(signal, (reason) => this.destroy(abortError(reason)));
    dispatcher.dispatch(options, this);
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return this;
  }

  /** Every byte read since the last call, in one piece; waits when there is none yet. */
  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.error !== null && this.size === 0) return Promise.reject(this.error);
    const ready = this.take();
    if (ready !== null) return Promise.resolve(ready);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** The bytes read (or the end) for the reader now, null when there is nothing yet. */
  private take(): IteratorResult<Uint8Array> | null {
    if (this.size > 0) {
      const value = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
      this.chunks = [];
      this.size = 0;
      if (this.paused) {
        this.paused = false;
        this.resume?.();
      }
      return { value, done: false };
    }
    return this.complete ? { value: undefined, done: true } : null;
  }

  /**
   * Hands a waiting reader what came, once the network read that brought it is parsed whole (a
   * microtask later): the pieces of one read reach the reader together, as undici's Readable gave them.
   */
  private wake(): void {
    if (this.waiter === null || this.waking) return;
    this.waking = true;
    queueMicrotask(() => {
      this.waking = false;
      const waiter = this.waiter;
      if (waiter === null) return;
      if (this.error !== null) {
        this.waiter = null;
        waiter.reject(this.error);
        return;
      }
      const ready = this.take();
      if (ready === null) return;
      this.waiter = null;
      waiter.resolve(ready);
    });
  }

  /** Stops the exchange (nothing more is read) and releases the socket; the reader gets `error`. */
  destroy(error: Error = new Error('the stream was closed')): void {
    if (this.complete || this.error !== null) return;
    this.fail(error);
    this.stopExchange(error);
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void, _statusText: string): boolean {
    if (status < 200) return true; // 1xx: the answer is still to come
    this.status = status;
    this.rawHeaders = rawHeaders;
    this.resume = resume;
    this.headResolve();
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.error !== null) return false;
    this.wake();
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size < HIGH_WATER) return true;
    this.paused = true;
    return false;
  }

  onComplete(_trailers: string[] | null): void {
    if (this.error !== null) return;
    this.complete = true;
    this.wake();
  }

  onError(error: Error): void {
    this.fail(error);
  }

  private fail(error: unknown): void {
    if (this.complete || this.error !== null) return;
    this.error = error;
    this.chunks = [];
    this.size = 0;
    this.headReject(error);
    this.wake();
  }
}

function abortError(reason: unknown): Error {
  return reason instanceof Error ? reason : Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
}
