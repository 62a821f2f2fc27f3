// The parts of an event stream that bound its memory: the outlet (backpressure, idle drop), the
// shared terminal messages and the stream slots (issue 16 item 3).
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createSharedMessages } from '../../src/routes/pipelines/shared-messages.js';
import { createOutlet } from '../../src/routes/pipelines/stream-outlet.js';
import { createStreamSlots } from '../../src/routes/pipelines/stream-slots.js';

/** A writable that takes chunks into `chunks` and, unless `drains`, never finishes writing one. */
function sink(drains: boolean) {
  const chunks: Buffer[] = [];
  const out = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      if (drains) setImmediate(done);
    },
  });
  return { out, chunks };
}

describe('stream outlet', () => {
  it('hands a client that takes nothing one slice of a large message, then drops it after the idle time', async () => {
    const { out, chunks } = sink(false);
    const drop = vi.fn();
    const outlet = createOutlet(out, new AbortController().signal, 200, drop);
    let done = false;
    const writing = outlet.write(Buffer.alloc(4 * 1024 * 1024, 1)).then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(done).toBe(false);
    expect(chunks.reduce((n, c) => n + c.length, 0)).toBe(64 * 1024);
    expect(drop).not.toHaveBeenCalled();
    await writing;
    expect(drop).toHaveBeenCalledTimes(1);
  });

  it('writes everything, in order, to a client that keeps up, without dropping it', async () => {
    const { out, chunks } = sink(true);
    const drop = vi.fn();
    const outlet = createOutlet(out, new AbortController().signal, 200, drop);
    const big = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    await outlet.write('retry: 1000\n\n');
    await outlet.write(big);
    await outlet.write('x'.repeat(100_000));
    expect(Buffer.concat(chunks)).toEqual(Buffer.concat([Buffer.from('retry: 1000\n\n'), big, Buffer.from('x'.repeat(100_000))]));
    expect(drop).not.toHaveBeenCalled();
  });

  it('stops waiting, and writes no more, once the stream is aborted', async () => {
    const { out, chunks } = sink(false);
    const abort = new AbortController();
    const drop = vi.fn();
    const writing = createOutlet(out, abort.signal, 60_000, drop).write(Buffer.alloc(1024 * 1024));
    abort.abort();
    await writing;
    expect(chunks).toHaveLength(1);
    expect(drop).not.toHaveBeenCalled();
  });
});

describe('shared terminal messages', () => {
  it('makes the bytes once for the streams sending them at the same time, and forgets them once all are done', async () => {
    const shared = createSharedMessages();
    const make = vi.fn(async () => Buffer.from('terminal'));
    const [one, two] = await Promise.all([shared.use('k', make), shared.use('k', make)]);
    expect(make).toHaveBeenCalledTimes(1);
    expect(one.bytes).toBe(two.bytes);
    one.release();
    one.release();
    expect(shared.size).toBe(1);
    two.release();
    expect(shared.size).toBe(0);
  });

  it('does not keep a failed make: the next stream tries again', async () => {
    const shared = createSharedMessages();
    await expect(shared.use('k', () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    expect(shared.size).toBe(0);
    const again = await shared.use('k', async () => Buffer.from('ok'));
    expect(again.bytes?.toString()).toBe('ok');
  });
});

describe('stream slots', () => {
  it('refuses an account over its share with 429 and everyone once all are taken with 503; a release frees one slot once', () => {
    const slots = createStreamSlots(3, 2);
    const a1 = slots.take('a');
    slots.take('a');
    expect(() => slots.take('a')).toThrow(expect.objectContaining({ statusCode: 429, code: 'too_many_account_streams' }));
    slots.take('b');
    expect(() => slots.take('c')).toThrow(expect.objectContaining({ statusCode: 503, code: 'too_many_streams' }));
    a1();
    a1();
    expect(slots.open).toBe(2);
    slots.take('c');
    expect(() => slots.take('d')).toThrow(expect.objectContaining({ statusCode: 503 }));
  });
});
