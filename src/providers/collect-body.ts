// A whole vendor answer read straight off undici's `dispatch`: the status, the raw headers and
// the body's chunks, nothing in between. undici's `request` wraps every answer in a Readable
// stream (an async resource, an abort listener, an async iterator to read it) that an answer
// read whole has no use for; that was a sixth of what a proxied request allocated (README,
// Performance). The handler speaks the callback interface undici's own `request` is built on
// (onConnect, onHeaders, onData, onComplete, onError), which undici passes on unwrapped.
import type { Dispatcher } from 'undici';
import { DispatchExchange } from './dispatch-exchange.js';

export interface CollectedAnswer {
  status: number;
  /** Header names and values in turn, as undici read them; see `rawHeader`. */
  rawHeaders: Array<Buffer | string>;
  /** The body's chunks, in order (usually one); empty for an error answer over its limit. */
  chunks: Buffer[];
  size: number;
}

/** Thrown (as the rejection) when a 2xx answer's body, declared or counted, passes the limit. */
export const RESPONSE_TOO_LARGE = 'RESPONSE_TOO_LARGE';

/** Error answers (non-2xx) are kept to this many bytes; past it their body is dropped, not failed. */
export const ERROR_BODY_LIMIT = 64 * 1024;

const DROPPED = Symbol('error body dropped');

/**
 * Sends one request and collects its answer. `abort(reason)` settles the call at once with
 * `reason` (whether or not a socket was assigned yet) and releases the socket.
 */
export class BodyCollector extends DispatchExchange {
  readonly answer: Promise<CollectedAnswer>;
  private resolve!: (answer: CollectedAnswer) => void;
  private reject!: (error: unknown) => void;
  private settled = false;
  /** The answer's status and headers once they came (0 and none before). */
  status = 0;
  rawHeaders: Array<Buffer | string> = [];
  private chunks: Buffer[] = [];
  private size = 0;
  private limit: number;

  /** `limit`: the largest 2xx body accepted. */
  constructor(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, private readonly maxBytes: number) {
    super();
    this.limit = maxBytes;
    this.answer = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    dispatcher.dispatch(options, this);
  }

  abort(reason: Error): void {
    this.fail(reason);
    this.stopExchange(reason);
  }

  onHeaders(status: number, rawHeaders: Buffer[], _resume: () => void, _statusText: string): boolean {
    if (status < 200) return true; // 1xx: the answer is still to come
    this.status = status;
    this.rawHeaders = rawHeaders;
    if (status >= 300) {
      this.limit = ERROR_BODY_LIMIT;
      return true;
    }
    // A declared length over the cap fails before a byte is read; an undeclared one is counted.
    const declared = rawHeader(rawHeaders, 'content-length');
    if (declared !== undefined && Number(declared) > this.maxBytes) this.abort(tooLarge());
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.abort(this.status >= 300 ? dropped() : tooLarge());
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(_trailers: string[] | null): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve({ status: this.status, rawHeaders: this.rawHeaders, chunks: this.chunks, size: this.size });
  }

  onError(error: Error): void {
    this.fail(error);
  }

  private fail(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    // An error answer too long to read is still an error answer: the caller gets its status.
    if ((error as { code?: unknown }).code === DROPPED) this.resolve({ status: this.status, rawHeaders: this.rawHeaders, chunks: [], size: 0 });
    else this.reject(error);
  }
}

/** The body as text: a single chunk is decoded in place, several are joined once. */
export function bodyText(answer: CollectedAnswer): string {
  const { chunks } = answer;
  if (chunks.length === 0) return '';
  if (chunks.length === 1) return chunks[0]!.toString('utf8');
  return Buffer.concat(chunks, answer.size).toString('utf8');
}

/** One header's first value from undici's raw pairs (`name` in lower case); read without parsing the rest. */
export function rawHeader(raw: ReadonlyArray<Buffer | string>, name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i]!;
    if (key.length === name.length && sameName(key, name)) return raw[i + 1]!.toString('latin1');
  }
  return undefined;
}

/** Every header, for the rare answers that need more than one or two (errors: retry-after). */
export function parsedHeaders(raw: ReadonlyArray<Buffer | string>): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i]!.toString('latin1').toLowerCase();
    const value = raw[i + 1]!.toString('latin1');
    const seen = headers[key];
    headers[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return headers;
}

function sameName(key: Buffer | string, name: string): boolean {
  if (typeof key === 'string') return key.toLowerCase() === name;
  for (let j = 0; j < name.length; j++) {
    // `name` is lower case; upper-case ASCII letters differ by 0x20 only, and no other byte of a
    // header name (a token) can turn into a letter, digit or '-' that way.
    if ((key[j]! | 0x20) !== name.charCodeAt(j)) return false;
  }
  return true;
}

function tooLarge(): Error {
  return Object.assign(new Error('response too large'), { code: RESPONSE_TOO_LARGE });
}

function dropped(): Error {
  return Object.assign(new Error('error body over its limit'), { code: DROPPED });
}
