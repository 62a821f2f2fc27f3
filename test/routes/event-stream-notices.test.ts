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

/**
 * The real wake-ups over a LISTEN that the test drives: `notify()` announces events of ID. The
 * statements they run (the run's count of watching processes) are kept in `statements`, each
 * answered by `answer` (at once and successfully unless a test says otherwise).
 */
function fakeNotices(answer: (sql: string) => Promise<void> = async () => {}) {
  let handler: ((payload: string) => void) | null = null;
  const statements: string[] = [];
  const failures: string[] = [];
  const wakeups = createEventWakeups({
    listen: async (_channel: string, onNotice: (payload: string) => void) => {
      handler = onNotice;
      return async () => {};
    },
    query: async <Row>(sql: string, params?: unknown[]) => {
      statements.push(`${sql.includes('watchers + 1') ? 'count' : 'uncount'} ${String(params?.[0])}`);
      await answer(sql);
      return [] as Row[];
    },
  }, (_error, failed) => failures.push(failed));
  return { wakeups, notify: () => handler?.(ID), statements, failures };
}

function event(seq: number, type: string): InstanceEvent {
  return { instanceId: ID, seq, type, data: { step: `s${seq}` }, createdAt: new Date(0) } as InstanceEvent;
}

/** The stream's dependencies over an in-memory event list; `duringRead` runs inside each read, after it took its rows. */
function fakeDeps(rows: InstanceEvent[], duringRead: (read: number) => void, notices = fakeNotices()) {
  const { wakeups, notify } = notices;
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

describe("a run's count of the processes watching it", () => {
  const outlet = { write: async () => {}, end: () => {} };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  it('is taken once per process before the first read, and given back once its last stream stops', async () => {
    let answerCount!: () => void;
    const counted = new Promise<void>((resolve) => (answerCount = resolve));
    const notices = fakeNotices((sql) => (sql.includes('watchers + 1') ? counted : Promise.resolve()));
    const reads: string[] = [];
    const { deps } = fakeDeps([event(1, 'instance.started')], () => reads.push(`read after ${notices.statements.length} statements`), notices);
    const first = new AbortController();
    const second = new AbortController();
    const pumpedFirst = pumpEvents(deps, ID, 0, outlet, first.signal);
    const pumpedSecond = pumpEvents(deps, ID, 0, outlet, second.signal);
    await settle();
    // The count is not committed yet: neither stream has read (an event written now would be announced to neither).
    expect(reads).toEqual([]);
    expect(notices.statements).toEqual([`count ${ID}`]);
    answerCount();
    await settle();
    expect(reads).toEqual(['read after 1 statements', 'read after 1 statements']);
    first.abort();
    await pumpedFirst;
    await settle();
    expect(notices.statements).toEqual([`count ${ID}`]);
    second.abort();
    await pumpedSecond;
    await settle();
    expect(notices.statements).toEqual([`count ${ID}`, `uncount ${ID}`]);
    expect(notices.failures).toEqual([]);
  });

  it('is not given back when taking it failed, and the stream reads (and polls) all the same', async () => {
    const notices = fakeNotices(async (sql) => {
      if (sql.includes('watchers + 1')) throw new Error('database unavailable');
    });
    const { deps } = fakeDeps([event(1, 'instance.started')], () => {}, notices);
    const written: string[] = [];
    const abort = new AbortController();
    const pumped = pumpEvents(deps, ID, 0, { write: async (chunk) => void written.push(String(chunk)), end: () => {} }, abort.signal);
    await settle();
    expect(written.filter((w) => w.startsWith('id: ')).map((w) => w.split('\n')[0])).toEqual(['id: 1']);
    abort.abort();
    await pumped;
    await settle();
    expect(notices.statements).toEqual([`count ${ID}`]);
    expect(notices.failures).toEqual(['cannot count a live event stream on its run; the stream polls for its events']);
  });

  it('is not taken by a wait for the run to end (its end is always announced)', async () => {
    const notices = fakeNotices();
    const deps = {
      instances: { statusOf: async () => ({ status: 'completed', finishedAt: null }) } as unknown as Parameters<typeof waitUntilFinished>[0]['instances'],
      wakeups: notices.wakeups,
      pollMs: POLL_MS,
    };
    expect(await waitUntilFinished(deps, ID, 2_000, new AbortController().signal)).toBe(true);
    expect(notices.statements).toEqual([]);
  });
});
