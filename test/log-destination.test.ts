// The server's log destination: lines are gathered and written asynchronously in batches (when
// they reach LOG_BATCH_CHARS, or LOG_FLUSH_MS after the first), in order, and all of them at once
// by flushSync() on exit; nothing is scheduled while no line comes. While the reader is behind,
// lines past the bound are dropped, and counted in a line of their own.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LOG_BATCH_CHARS, LOG_FLUSH_MS, logDestination } from '../src/log-destination.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'log-destination-'));
  file = path.join(dir, 'out.log');
  // Only the batch timer is faked: the file writes complete on their own.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

const written = () => readFileSync(file, 'utf8');
/** Waits (turns of the event loop, bounded) until the file holds `text`; the writes are asynchronous. */
async function until(text: string): Promise<void> {
  for (let turn = 0; turn < 20_000 && written() !== text; turn++) await new Promise((resolve) => setImmediate(resolve));
  expect(written()).toBe(text);
}
const line = (n: number, width = 40) => `${JSON.stringify({ n, pad: 'x'.repeat(width) })}\n`;

describe('log destination', () => {
  it('a line waits for LOG_FLUSH_MS, then goes out with those given meanwhile', async () => {
    const logs = logDestination(openSync(file, 'w'));
    logs.write(line(1));
    expect(vi.getTimerCount()).toBe(1);
    logs.write(line(2));
    expect(vi.getTimerCount()).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(written()).toBe('');
    vi.advanceTimersByTime(LOG_FLUSH_MS);
    await until(line(1) + line(2));
    // Nothing left to write: nothing scheduled until the next line.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a batch of LOG_BATCH_CHARS goes out without waiting; the line after it waits for its own', async () => {
    const logs = logDestination(openSync(file, 'w'));
    const lines = Array.from({ length: Math.ceil(LOG_BATCH_CHARS / line(0).length) }, (_, i) => line(i));
    for (const l of lines) logs.write(l);
    await until(lines.join(''));
    expect(vi.getTimerCount()).toBe(0);
    logs.write(line(99));
    await new Promise((resolve) => setImmediate(resolve));
    expect(written()).toBe(lines.join(''));
    vi.advanceTimersByTime(LOG_FLUSH_MS);
    await until(lines.join('') + line(99));
  });

  it('flushSync() writes every line given before it returns, in order', () => {
    const logs = logDestination(openSync(file, 'w'));
    const lines = [line(1), line(2), line(3)];
    for (const l of lines) logs.write(l);
    logs.flushSync();
    expect(written()).toBe(lines.join(''));
    expect(vi.getTimerCount()).toBe(0);
  });
});

// A reader behind: lines given in one burst, faster than any write, into a FIFO that `cat` starts reading afterwards.
describe('log destination, a reader behind', () => {
  const BUFFER = 32 * 1024;
  /** Line n, LOG_BATCH_CHARS long: each line is a batch of its own, handed over as it is given. */
  const numbered = (n: number) => {
    const bare = JSON.stringify({ level: 30, n, pad: '' });
    return `${JSON.stringify({ level: 30, n, pad: 'y'.repeat(LOG_BATCH_CHARS - bare.length - 1) })}\n`;
  };
  const TOTAL = 300;

  /** The FIFO, its writer (opened read-write, so the open does not wait for a reader), and what `cat` reads from it once started. */
  function fifoWithLateReader(flags: number = constants.O_RDWR) {
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const fd = openSync(fifo, flags);
    let read = '';
    let reader: ChildProcess | null = null;
    // Complete lines only: a chunk may end inside one.
    const parsed = () => read.slice(0, read.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    return {
      fd,
      /** Starts `cat` on the FIFO, after `delay` seconds of its own. */
      startReading(delay = 0) {
        reader = spawn('sh', ['-c', `sleep ${delay}; exec cat "$0"`, fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
        reader.stdout!.setEncoding('utf8').on('data', (chunk: string) => (read += chunk));
      },
      /** Waits until `count` lines were read (turns of the event loop, bounded), then a few turns more for the writer to see its writes complete. */
      async read(count: number): Promise<Record<string, unknown>[]> {
        for (let turn = 0; turn < 200_000 && parsed().length < count; turn++) await new Promise((resolve) => setImmediate(resolve));
        for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
        return parsed();
      },
      close() {
        reader?.kill();
        closeSync(fd);
      },
    };
  }

  let fifo: ReturnType<typeof fifoWithLateReader>;
  afterEach(() => fifo.close());

  /**
   * A destination on a FIFO given TOTAL lines at once: the first batch goes to the writer, the
   * next are held up to the bound, the rest dropped. Then `cat` reads what was held, in order.
   */
  async function afterBurst() {
    fifo = fifoWithLateReader();
    const logs = logDestination(fifo.fd, { bufferBytes: BUFFER });
    for (let n = 0; n < TOTAL; n++) logs.write(numbered(n));
    // Once a line is refused, less than a line's room is left: the rest, each with the count before it, are refused too.
    const kept = TOTAL - logs.dropped;
    expect(numbered(TOTAL).length).toBe(LOG_BATCH_CHARS);
    // Held: the bound's worth, the line under way included.
    expect(kept).toBe(Math.floor(BUFFER / LOG_BATCH_CHARS));
    fifo.startReading();
    expect((await fifo.read(kept)).map((l) => l.n)).toEqual(Array.from({ length: kept }, (_, n) => n));
    return { logs, kept };
  }

  it('holds lines up to its bound, drops the rest, and writes their count before the first lines after the gap', async () => {
    const { logs, kept } = await afterBurst();
    logs.write(numbered(TOTAL));
    logs.write(numbered(TOTAL + 1));
    vi.advanceTimersByTime(LOG_FLUSH_MS);
    const lines = await fifo.read(kept + 3);
    expect(lines).toHaveLength(kept + 3);
    expect(lines[kept]).toMatchObject({
      level: 40,
      pid: process.pid,
      dropped_lines: TOTAL - kept,
      msg: `${TOTAL - kept} log lines dropped: the reader of stdout fell more than ${BUFFER} bytes behind`,
    });
    expect(lines.slice(kept + 1).map((l) => l.n)).toEqual([TOTAL, TOTAL + 1]);
    expect(logs.dropped).toBe(0);
    // The count since the start stays, for /metrics.
    expect(logs.droppedTotal).toBe(TOTAL - kept);
  });

  it('flushSync() writes the count of the lines dropped when no line comes after them', async () => {
    const { logs, kept } = await afterBurst();
    expect(await fifo.read(kept)).toHaveLength(kept);
    logs.flushSync();
    const lines = await fifo.read(kept + 1);
    expect(lines).toHaveLength(kept + 1);
    expect(lines[kept]).toMatchObject({ level: 40, dropped_lines: TOTAL - kept });
    expect(logs.dropped).toBe(0);
  });

  it('flushSync() writes every line whole to a non-blocking descriptor that is full, once it is read again', async () => {
    fifo = fifoWithLateReader(constants.O_RDWR | constants.O_NONBLOCK);
    // The FIFO filled to its last byte: any write is refused for now (EAGAIN).
    // Spaces, which the JSON of the first line read after them ignores.
    for (const size of [4096, 1]) {
      try {
        for (;;) writeSync(fifo.fd, Buffer.alloc(size, ' '));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      }
    }
    const logs = logDestination(fifo.fd);
    // Fewer than LOG_BATCH_CHARS: gathered, not yet handed to sonic-boom, whose own retry after EAGAIN waits for a timer.
    const lines = [line(1), line(2, 300), `${JSON.stringify({ n: 3, text: 'é'.repeat(300) })}\n`];
    expect(lines.join('').length).toBeLessThan(LOG_BATCH_CHARS);
    for (const l of lines) logs.write(l);
    fifo.startReading(0.2);
    logs.flushSync();
    const read = (await fifo.read(3)).filter((l) => l.n !== undefined);
    expect(read).toEqual(lines.map((l) => JSON.parse(l) as unknown));
  });
});
