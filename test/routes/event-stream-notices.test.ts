// The run notices' wake-ups (createEventWakeups, over a fake LISTEN), with the database replaced
// by a list: a notice that comes while the live event stream (src/routes/pipelines/event-stream.ts)
// or a rerun's wait (wait-finish.ts) is reading, for what that read did not see, must be acted on
// at once, not after the next poll.
import { describe, expect, it } from 'vitest';
import { pumpEvents, type EventStreamDeps } from '../../src/routes/pipelines/event-stream.js';
import { createSharedMessages } from '../../src/routes/pipelines/shared-messages.js';
import { waitUntilFinished } from '../../src/routes/pipelines/wait-finish.js';
import { createEventWakeups, type InstanceEvent } from '../../src/services/instance-events.js';

const ID = '00000000-0000-4000-8000-000000000001';
/** Far longer than the test: only a notice can bring an event in time. */
const POLL_MS = 60_000;

/** The real wake-ups over a LISTEN that the test drives: `notify()` announces events of ID. */
function fakeNotices() {
  let handler: ((payload: string) => void) | null = null;
  const wakeups = createEventWakeups({
    listen: async (_channel: string, onNotice: (payload: string) => void) => {
      handler = onNotice;
      return async () => {};
    },
  }, (error) => {
    throw error;
  });
  return { wakeups, notify: () => handler?.(ID) };
}

function event(seq: number, type: string): InstanceEvent {
  return { instanceId: ID, seq, type, data: { step: `s${seq}` }, createdAt: new Date(0) } as InstanceEvent;
}

/** The stream's dependencies over an in-memory event list; `duringRead` runs inside each read, after it took its rows. */
function fakeDeps(rows: InstanceEvent[], duringRead: (read: number) => void) {
  const { wakeups, notify } = fakeNotices();
  let reads = 0;
  const deps: EventStreamDeps = {
    events: {
      after: async (_id: string, seq: number) => {
        const seen = rows.filter((r) => r.seq > seq);
        duringRead(++reads);
        await new Promise((resolve) => setImmediate(resolve));
        return seen;
      },
    },
    instances: {
      statusOf: async () => ({ status: 'running', finishedAt: null }),
      get: async () => null,
    } as unknown as EventStreamDeps['instances'],
    wakeups,
    terminals: createSharedMessages(),
    pollMs: POLL_MS,
    keepAliveMs: POLL_MS,
  };
  return { deps, notify };
}

describe('the live event stream', () => {
  it('reads again at once after a notice that came during a read that missed its rows', async () => {
    const rows = [event(1, 'instance.started')];
    const { deps, notify } = fakeDeps(rows, (read) => {
      // The second read has taken its rows when the writer commits and announces event 2.
      if (read === 2) {
        rows.push(event(2, 'step.started'));
        notify();
      }
    });
    const written: string[] = [];
    let gotSecond!: () => void;
    const second = new Promise<void>((resolve) => (gotSecond = resolve));
    const abort = new AbortController();
    const outlet = {
      write: async (chunk: string | Buffer) => {
        written.push(String(chunk));
        if (String(chunk).startsWith('id: 2\n')) gotSecond();
      },
      end: () => {},
    };
    const pumped = pumpEvents(deps, ID, 0, outlet, abort.signal);
    // The first read sends event 1; a notice during it (none here) would not matter.
    await new Promise((resolve) => setTimeout(resolve, 20));
    notify(); // wakes the paused stream: its second read misses event 2, committed during it
    const timedOut = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 2_000));
    expect(await Promise.race([second.then(() => 'delivered'), timedOut])).toBe('delivered');
    abort.abort();
    await pumped;
    expect(written.filter((w) => w.startsWith('id: ')).map((w) => w.split('\n')[0])).toEqual(['id: 1', 'id: 2']);
  });
});

describe('waiting for a run to finish', () => {
  it('reads again at once after a notice that came during a read that saw the run still going', async () => {
    const { wakeups, notify } = fakeNotices();
    let reads = 0;
    const deps = {
      instances: {
        statusOf: async () => {
          reads += 1;
          // The first read sees the run running; it finishes and announces it meanwhile.
          if (reads === 1) notify();
          await new Promise((resolve) => setImmediate(resolve));
          return { status: reads === 1 ? 'running' : 'completed', finishedAt: null };
        },
      } as unknown as Parameters<typeof waitUntilFinished>[0]['instances'],
      wakeups,
      pollMs: POLL_MS,
    };
    const started = Date.now();
    expect(await waitUntilFinished(deps, ID, 2_000, new AbortController().signal)).toBe(true);
    expect(reads).toBe(2);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
