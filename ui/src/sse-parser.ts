// The Server-Sent Events wire format, parsed incrementally (the WHATWG "event stream
// interpretation"): fields per line, a blank line dispatches, comments are ignored.
export interface SseEvent {
  /** The last event id seen so far, as a reconnect must send it in Last-Event-ID. */
  id: string | null;
  event: string;
  data: string;
}

export class SseParser {
  lastEventId: string | null = null;
  /** The reconnection delay the server asked for, in ms. */
  retryMs: number | null = null;
  private buffer = '';
  private eventType = '';
  private data: string[] = [];

  /** Feeds decoded text; returns the events it completed. */
  push(text: string): SseEvent[] {
    this.buffer += text;
    const events: SseEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      // A lone \r at the end may be the first half of \r\n: wait for more.
      if (!match || (match[0] === '\r' && match.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.line(line);
      if (event) events.push(event);
    }
    return events;
  }

  private line(line: string): SseEvent | null {
    if (line === '') {
      const event = this.data.length > 0 ? { id: this.lastEventId, event: this.eventType || 'message', data: this.data.join('\n') } : null;
      this.data = [];
      this.eventType = '';
      return event;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.eventType = value;
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    return null;
  }
}
