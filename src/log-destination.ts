// Where the server's log lines go: stdout, written asynchronously (sonic-boom, which pino's own
// destination is, hands each write to libuv's threadpool) so that a slow reader of the logs never
// holds up a request, and in batches: lines gather here until LOG_BATCH_CHARS, or for at most
// LOG_FLUSH_MS after the first of them. Handed over one by one, every request's line was a write
// of its own: a threadpool thread woken, the write, an eventfd to wake the event loop, and the
// completion run on it; batched, a proxied request makes 6.5 system calls where it made 11.3
// (docs/performance.md). Nothing runs while no line comes (sonic-boom's `periodicFlush` wrote an
// empty line on every tick: an idle process's CPU 4x). The server flushes synchronously on every
// exit (`flushSync`, src/server.ts).
//
// A reader that stops reading (a stuck log shipper) must not take the process down with it:
// lines waiting to be written are held up to LOG_BUFFER_BYTES, later ones are dropped and
// counted, and the first batch written once there is room again begins with a line saying how
// many were lost. (What it cannot spare the process: the write under way to such a reader holds
// a threadpool thread, and Node waits for that thread as the process exits.)
import { writeSync } from 'node:fs';
import { hostname } from 'node:os';
import pino from 'pino';

/** A batch is handed to the writer once its lines reach this many characters... */
export const LOG_BATCH_CHARS = 1024;
/** ... or this long after its first line. */
export const LOG_FLUSH_MS = 100;
/** Bytes of lines held at most while stdout's reader is behind; lines past it are dropped. */
export const LOG_BUFFER_BYTES = 16 * 1024 * 1024;

export interface LogDestination {
  write(line: string): void;
  /**
   * On exit: writes every line given so far before returning, but for a write already under way,
   * which goes on in the threadpool (Node waits for it as the process exits).
   */
  flushSync(): void;
  /** Lines dropped since the last count written. */
  readonly dropped: number;
  /** Lines dropped since it was made (`ladder_log_lines_dropped_total` in /metrics). */
  readonly droppedTotal: number;
}

export interface LogDestinationOptions {
  /** Bytes held at most while the reader is behind (LOG_BUFFER_BYTES). */
  bufferBytes?: number;
}

/** A line in pino's shape (warn), saying how many lines were dropped before it. */
function droppedNotice(lines: number, bufferBytes: number): string {
  return `${JSON.stringify({
    level: 40,
    time: Date.now(),
    pid: process.pid,
    hostname: hostname(),
    dropped_lines: lines,
    msg: `${lines} log lines dropped: the reader of stdout fell more than ${bufferBytes} bytes behind`,
  })}\n`;
}

export function logDestination(fd = 1, options: LogDestinationOptions = {}): LogDestination {
  const bufferBytes = options.bufferBytes ?? LOG_BUFFER_BYTES;
  const out = pino.destination({ dest: fd, sync: false, maxLength: bufferBytes });
  let lines: string[] = [];
  let chars = 0;
  let timer: NodeJS.Timeout | null = null;
  /** Lines dropped and not yet reported. */
  let dropped = 0;
  let droppedTotal = 0;
  /** Set by sonic-boom's 'drop' event, which it emits inside `write` for data it refuses. */
  let refused = false;
  out.on('drop', () => (refused = true));
  /** Whether sonic-boom holds lines not yet written: from a hand-over to its 'drain', once all is written. */
  let holding = false;
  out.on('drain', () => (holding = false));

  /** What is gathered, after the count of the lines dropped before it if any, taken out of the gathering. */
  const take = (): { text: string; count: number } => {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = lines.length === 1 ? lines[0]! : lines.join('');
    const text = dropped > 0 ? droppedNotice(dropped, bufferBytes) + batch : batch;
    const count = lines.length;
    lines = [];
    chars = 0;
    return { text, count };
  };
  const handOver = () => {
    if (lines.length === 0) return;
    const { text, count } = take();
    // The count goes with the first batch after the gap, in its write: on its own it would be
    // written while the batch behind it is refused, again and again while the reader is behind.
    refused = false;
    out.write(text);
    if (refused) {
      dropped += count;
      droppedTotal += count;
    } else {
      dropped = 0;
      holding = true;
    }
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
      if (lines.length === 0 && dropped === 0) {
        out.flushSync();
        return;
      }
      const { text } = take();
      dropped = 0;
      // Handed to sonic-boom, the lines would start an asynchronous write that its flushSync leaves
      // to the threadpool; with nothing of it under way they are written here, before returning.
      if (!holding) return writeWhole(fd, text);
      // Behind what it holds: it writes what waits, the write under way goes on in the threadpool.
      out.flushSync();
      out.write(text);
      out.flushSync();
    },
    get dropped() {
      return dropped;
    },
    get droppedTotal() {
      return droppedTotal;
    },
  };
}

/** How long a write refused for now (EAGAIN: a non-blocking `fd`) waits before it is tried again, as sonic-boom's do. */
const RETRY_MS = 10;

/** Writes `text` to `fd` before returning, whole: from where a partial write stopped, and again after EAGAIN. */
function writeWhole(fd: number, text: string): void {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; ) {
    try {
      at += writeSync(fd, bytes, at);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RETRY_MS);
    }
  }
}
