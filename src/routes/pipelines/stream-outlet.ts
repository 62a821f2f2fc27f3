// The writing end of one event stream, with backpressure: a write hands the client at most
// SLICE bytes at a time and waits for it to take them whenever its buffers are full, so a client
// that reads slowly holds a few slices in memory, not the whole history of a run. A client that
// takes nothing for `idleMs` while there is more to send is dropped, which frees its stream.
import type { Writable } from 'node:stream';

export interface Outlet {
  /** Writes `chunk`, waiting while the client is behind; returns early once the stream stops. */
  write(chunk: string | Buffer): Promise<void>;
  end(): void;
}

const SLICE = 64 * 1024;

/** `drop` disconnects the client (and stops the stream): called when it stalls for `idleMs`. */
export function createOutlet(out: Writable, signal: AbortSignal, idleMs: number, drop: () => void): Outlet {
  let dropped = false;
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        out.off('drain', done);
        out.off('close', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        dropped = true;
        drop();
      }, idleMs).unref();
      out.once('drain', done);
      out.once('close', done);
      signal.addEventListener('abort', done, { once: true });
    });

  return {
    async write(chunk) {
      // Most messages are small: one write. A large one (a terminal event with a long answer) goes
      // in slices of the same bytes; subarray() shares them rather than copying.
      const bytes = typeof chunk !== 'string' || chunk.length * 3 <= SLICE ? chunk : Buffer.from(chunk);
      for (let at = 0; at < bytes.length; at += SLICE) {
        if (dropped || signal.aborted || out.destroyed) return;
        const slice = typeof bytes === 'string' ? bytes : bytes.subarray(at, at + SLICE);
        if (!out.write(slice)) await drained();
      }
    },
    end() {
      if (!out.writableEnded && !out.destroyed) out.end();
    },
  };
}
