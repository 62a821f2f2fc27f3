// The one timer of a vendor stream's limits, on a fake clock: each limit stops the stream when it
// passes, with the error the stream fails with, and not a millisecond before.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallerGone } from '../../../src/abort-scope.js';
import type { CallDeadline } from '../../../src/providers/call-vendor.js';
import { StreamGuard } from '../../../src/providers/stream/stream-guard.js';

const limits = { firstByteMs: 1_000, idleMs: 500, maxDurationMs: 5_000, maxEventChars: 1024 };

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

function failure(guard: StreamGuard): { kind: string; message: string } | null {
  if (!guard.stop.aborted) return null;
  const error = guard.error('openai');
  return { kind: error.kind, message: error.message };
}

describe('StreamGuard', () => {
  it('stops an opening stream at the first-byte limit', () => {
    const guard = new StreamGuard(limits, undefined, undefined);
    vi.advanceTimersByTime(999);
    expect(guard.stop.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(failure(guard)).toEqual({ kind: 'timeout', message: 'openai: no stream event within 1000 ms' });
  });

  it("stops an opening stream at the router's deadline when it comes first, and marks it passed", () => {
    const deadline: CallDeadline = { at: performance.now() + 300, passed: false };
    const guard = new StreamGuard(limits, undefined, deadline);
    vi.advanceTimersByTime(299);
    expect(guard.stop.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(deadline.passed).toBe(true);
    expect(failure(guard)).toEqual({ kind: 'abort', message: 'openai: request aborted by the caller' });
  });

  it('once it flows: the first-byte limit and the deadline no longer hold, the idle limit counts from the last read', () => {
    const deadline: CallDeadline = { at: performance.now() + 1_200, passed: false };
    const guard = new StreamGuard(limits, undefined, deadline);
    vi.advanceTimersByTime(200);
    guard.flowing();
    for (let i = 0; i < 8; i++) {
      vi.advanceTimersByTime(400);
      guard.read();
    }
    expect(guard.stop.aborted).toBe(false);
    expect(deadline.passed).toBe(false);
    vi.advanceTimersByTime(499);
    expect(guard.stop.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(failure(guard)).toEqual({ kind: 'timeout', message: 'openai: the stream was idle for 500 ms' });
  });

  it('an idle limit shorter than the first-byte limit holds from the first chunk on', () => {
    const guard = new StreamGuard({ ...limits, firstByteMs: 2_000, idleMs: 300 }, undefined, undefined);
    vi.advanceTimersByTime(100);
    guard.flowing();
    vi.advanceTimersByTime(299);
    expect(guard.stop.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(failure(guard)).toEqual({ kind: 'timeout', message: 'openai: the stream was idle for 300 ms' });
  });

  it('stops a stream that keeps reading at its maximum duration, counted from the request', () => {
    const guard = new StreamGuard(limits, undefined, undefined);
    vi.advanceTimersByTime(100);
    guard.flowing();
    for (let elapsed = 100; elapsed < 4_900; elapsed += 100) {
      vi.advanceTimersByTime(100);
      guard.read();
    }
    expect(guard.stop.aborted).toBe(false);
    vi.advanceTimersByTime(100);
    expect(failure(guard)).toEqual({ kind: 'timeout', message: 'openai: the stream went past its maximum duration of 5000 ms' });
  });

  it('stops when the caller leaves, and lets the caller go once the stream ended', () => {
    const caller = new CallerGone();
    const guard = new StreamGuard(limits, caller, undefined);
    caller.abort();
    expect(failure(guard)).toEqual({ kind: 'abort', message: 'openai: request aborted by the caller' });

    const later = new CallerGone();
    const ended = new StreamGuard(limits, later, undefined);
    ended.end();
    later.abort();
    vi.advanceTimersByTime(10_000);
    expect(ended.stop.aborted).toBe(false);
  });

  it('a stream caller given as an AbortSignal stops it too', () => {
    const controller = new AbortController();
    const guard = new StreamGuard(limits, controller.signal, undefined);
    controller.abort();
    expect(failure(guard)).toEqual({ kind: 'abort', message: 'openai: request aborted by the caller' });
  });
});
