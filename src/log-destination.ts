// Where the server's log lines go: stdout, written asynchronously (sonic-boom, which pino's own
// destination is, hands each write to libuv's threadpool) so that a slow reader of the logs never
// holds up a request, and in batches: lines gather here until LOG_BATCH_CHARS, or for at most
// LOG_FLUSH_MS after the first of them. Handed over one by one, every request's line was a write
// of its own: a threadpool thread woken, the write, an eventfd to wake the event loop, and the
// completion run on it; batched, a proxied request makes 6.5 system calls where it made 11.3
// (docs/performance.md). Nothing runs while no line comes (sonic-boom's `periodicFlush` wrote an
// empty line on every tick: an idle process's CPU 4x). The server flushes synchronously on every
// exit (`flushSync`, src/server.ts).
import pino from 'pino';

/** A batch is handed to the writer once its lines reach this many characters... */
export const LOG_BATCH_CHARS = 1024;
/** ... or this long after its first line. */
export const LOG_FLUSH_MS = 100;

export interface LogDestination {
  write(line: string): void;
  /** Writes every line given so far before returning (on exit). */
  flushSync(): void;
}

export function logDestination(fd = 1): LogDestination {
  const out = pino.destination({ dest: fd, sync: false });
  let lines: string[] = [];
  let chars = 0;
  let timer: NodeJS.Timeout | null = null;
  const handOver = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (lines.length === 0) return;
    const batch = lines.length === 1 ? lines[0]! : lines.join('');
    lines = [];
    chars = 0;
    out.write(batch);
  };
  return {
    write(line) {
      lines.push(line);
      chars += line.length;
      if (chars >= LOG_BATCH_CHARS) handOver();
      else if (!timer) {
        timer = setTimeout(handOver, LOG_FLUSH_MS);
        timer.unref();
      }
    },
    flushSync() {
      handOver();
      out.flushSync();
    },
  };
}
