// Writes Responses events as server-sent events (`event: <type>` and `data: <json>`, as OpenAI
// sends them); every write is awaited, so a client that reads slowly slows the vendor read.
import type { Writable } from 'node:stream';
import { ClientGoneError } from '../chat/chunk-writer.js';
import type { ResponseEvent } from '../../responses/stream-events.js';
import { forget, whenAborted, type CallerSignal } from '../../abort-scope.js';

export class ResponseEventWriter {
  constructor(private readonly out: Writable, private readonly signal: CallerSignal) {}

  async write(events: ResponseEvent[]): Promise<void> {
    for (const event of events) await this.send(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  }

  /** The last event of a stream that failed: written if the client is still there, then the end. */
  final(event: ResponseEvent): void {
    if (this.signal.aborted || this.out.writableEnded) return;
    this.out.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    this.out.end();
  }

  end(): void {
    if (!this.out.writableEnded) this.out.end();
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
