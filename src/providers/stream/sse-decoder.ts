// One small text/event-stream decoder for every vendor (the WHATWG event-stream rules): bytes
// in as they arrive, whole events out. Lines may end in \n, \r\n or \r, and a chunk may end
// anywhere, even inside a multi-byte character or between \r and \n.
import type { SseEvent } from './types.js';

export class SseDecoderError extends Error {
  override readonly name = 'SseDecoderError';
}

export class SseDecoder {
  private readonly text = new TextDecoder('utf-8');
  private pending = '';
  private event = '';
  /** The data lines of the event being read. */
  private readonly values: string[] = [];
  private size = 0;

  /** `maxEventChars`: an event (or a line) longer than this is an error, so memory stays bounded. */
  constructor(private readonly maxEventChars: number) {}

  push(bytes: Uint8Array): SseEvent[] {
    return this.lines(this.pending + this.text.decode(bytes, { stream: true }), false);
  }

  /** The end of the body: a last event without its blank line still counts. */
  end(): SseEvent[] {
    const out = this.lines(this.pending + this.text.decode() + '\n', true);
    if (this.values.length > 0) out.push(this.dispatch()!);
    return out;
  }

  private lines(text: string, final: boolean): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    // Each searched again only once passed: one read may hold hundreds of lines, and most
    // streams have no \r at all (searching it from every line would rescan the whole read).
    let lf = text.indexOf('\n');
    let cr = text.indexOf('\r');
    for (;;) {
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
      let end = lf;
      if (cr !== -1 && (lf === -1 || cr < lf)) end = cr;
      if (end === -1) break;
      // A \r at the very end may be the first half of \r\n: wait for the next bytes.
      if (end === cr && end === text.length - 1 && !final) break;
      // The common line, `data: …`, costs one slice.
      if (text.startsWith('data: ', start)) this.data(text.slice(start + 6, end));
      else {
        const event = this.line(text.slice(start, end));
        if (event) out.push(event);
      }
      start = end + (end === cr && text.charCodeAt(end + 1) === 10 ? 2 : 1);
    }
    this.pending = text.slice(start);
    if (this.pending.length + this.size > this.maxEventChars) throw new SseDecoderError(`event larger than ${this.maxEventChars} characters`);
    return out;
  }

  private line(line: string): SseEvent | null {
    if (line === '') return this.dispatch();
    if (line.charCodeAt(0) === 58) return null; // ':' starts a comment (keep-alives)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data(value);
    else if (field === 'event') this.event = value;
    return null;
  }

  private data(value: string): void {
    this.values.push(value);
    this.size += value.length;
    if (this.size > this.maxEventChars) throw new SseDecoderError(`event larger than ${this.maxEventChars} characters`);
  }

  private dispatch(): SseEvent | null {
    if (this.values.length === 0) {
      this.event = '';
      return null;
    }
    const event = { event: this.event, data: this.values.length === 1 ? this.values[0]! : this.values.join('\n') };
    this.event = '';
    this.values.length = 0;
    this.size = 0;
    return event;
  }
}
