// The server's log destination: lines are gathered and written asynchronously in batches (when
// they reach LOG_BATCH_CHARS, or LOG_FLUSH_MS after the first), in order, and all of them at once
// by flushSync() on exit; nothing is scheduled while no line comes.
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
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
