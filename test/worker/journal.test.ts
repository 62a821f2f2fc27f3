// The journal's writes: checkpoints of calls finishing together go out in one statement (group
// commit); a background run makes no model call before its finished calls' checkpoints are
// stored or in the write under way (stored, unless its lease surely holds), and its last ones go
// out with its outcome; a synchronous run's checkpoints are written behind it and settled before
// its outcome; a stale fence still writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { ApiError } from '../../src/errors.js';
import { InstanceJournal } from '../../src/worker/journal.js';
import { openTestDatabase } from '../helpers/database.js';
import { callKeys, events, insertPending, instance, waitFor } from '../helpers/instances.js';

let database: Database;
let accountId: string;
beforeAll(async () => {
  database = await openTestDatabase();
  [{ id: accountId }] = (await database.query<{ id: string }>(`insert into accounts (username) values ('journal-owner') returning id`)) as [{ id: string }];
});
afterAll(async () => {
  await database?.close();
});

/** The database, counting the statements the journal sends. */
function counting() {
  const statements: string[] = [];
  /** The event types each statement wrote, in the order sent. */
  const eventTypes: string[][] = [];
  const eventsOf = (params?: unknown[]) => {
    const list = params?.findLast((p) => typeof p === 'string' && p.startsWith('[{"seq"'));
    eventTypes.push(typeof list === 'string' ? (JSON.parse(list) as { type: string }[]).map((e) => e.type) : []);
  };
  const db: Pick<Database, 'query' | 'queryRelaxed'> = {
    query: (text, params, name) => {
      statements.push(name ?? 'query');
      eventsOf(params);
      return database.query(text, params, name);
    },
    queryRelaxed: (name, text, params) => {
      statements.push(name);
      eventsOf(params);
      return database.queryRelaxed(name, text, params);
    },
  };
  return { db, statements, eventTypes };
}

const insertHeld = async (fence = 1) =>
  insertPending(database, { ladderId: null, ladderVersion: 1, author: 'a', slug: 's', accountId, input: 'q' }, { status: 'running', fence, attempts: 1, started_at: new Date() });
const call = (n: number) => ({ output: `out ${n}`, usage: { prompt_tokens: n, completion_tokens: 1, total_tokens: n + 1 }, costNanos: n * 1_000_000, provider: 'openai', latencyMs: n });
const place = (n: number) => ({ stepId: 'fan', pass: 1, depth: 0, node: n, key: `1.fan.${n}` });
const progress = (n: number) => ({ usage: { prompt_tokens: n, completion_tokens: n, total_tokens: 2 * n }, spendNanos: n * 1_000_000, modelCalls: n, trace: [] });

describe('the run journal', () => {
  it('writes the checkpoints of calls finishing together in one statement; the next call waits until they are stored', async () => {
    const id = await insertHeld();
    const { db, statements } = counting();
    const journal = new InstanceJournal(db, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: () => {} });
    for (const n of [1, 2, 3, 4, 5]) await journal.callCompleted(place(n), call(n), { prompt: `p${n}`, survived: true, progress: progress(n) });
    expect(statements).toEqual([]);
    await journal.beforeCall();
    expect(statements).toEqual(['ladder_journal_flush']);
    expect((await callKeys(database, id)).sort()).toEqual(['1.fan.1', '1.fan.2', '1.fan.3', '1.fan.4', '1.fan.5']);
    // Nothing left to store: the next call goes at once, without a statement.
    await journal.beforeCall();
    journal.close();
    expect(statements).toEqual(['ladder_journal_flush']);
    expect((await events(database, id)).map((e) => [e.seq, e.type, e.data.node])).toEqual([1, 2, 3, 4, 5].map((n) => [n, 'node.completed', n]));
    const [row] = await database.query<Record<string, unknown>>('select output, usage, cost_nanos::float8 as cost_nanos, provider, latency_ms from instance_calls where instance_id = $1 and call_key = $2', [id, '1.fan.3']);
    expect(row).toEqual({ output: 'out 3', usage: call(3).usage, cost_nanos: 3_000_000, provider: 'openai', latency_ms: 3 });
    expect(await instance(database, id)).toMatchObject({ model_calls: 5, steps_total: 1 });
  });

  it('writes gathered checkpoints after the gathering window when no call asks for them', async () => {
    const id = await insertHeld();
    const { db, statements } = counting();
    const journal = new InstanceJournal(db, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: () => {} });
    for (const n of [1, 2]) await journal.callCompleted(place(n), call(n), { prompt: 'p', survived: true, progress: progress(n) });
    await waitFor(async () => (await callKeys(database, id)).length === 2, 15_000, 'the checkpoints');
    expect(statements).toEqual(['ladder_journal_flush']);
    journal.close();
  });

  it('a call finishing while a write is under way goes out with the next one, after it', async () => {
    const id = await insertHeld();
    const { db, statements } = counting();
    const journal = new InstanceJournal(db, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: () => {} });
    await journal.callCompleted(place(1), call(1), { prompt: 'p', survived: true, progress: progress(1) });
    const first = journal.beforeCall();
    await Promise.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    for (const n of [2, 3]) await journal.callCompleted(place(n), call(n), { prompt: 'p', survived: true, progress: progress(n) });
    await Promise.all([first, journal.beforeCall()]);
    journal.close();
    expect(statements).toEqual(['ladder_journal_flush', 'ladder_journal_flush']);
    expect((await callKeys(database, id)).sort()).toEqual(['1.fan.1', '1.fan.2', '1.fan.3']);
  });

  it("a run's last checkpoints go out with its outcome, in one statement", async () => {
    const id = await insertHeld();
    const { db, statements, eventTypes } = counting();
    const journal = new InstanceJournal(db, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: () => {} });
    await journal.callCompleted(place(1), call(1), { prompt: 'p', survived: true, progress: progress(1) });
    expect(await journal.finish({ status: 'completed', answer: 'out 1', progress: progress(1) }, [])).toBeInstanceOf(Date);
    journal.close();
    expect(statements).toEqual(['ladder_journal_finish']);
    expect(eventTypes).toEqual([['node.completed', 'instance.completed']]);
    expect(await callKeys(database, id)).toEqual(['1.fan.1']);
    const [row] = await database.query<Record<string, unknown>>('select output, cost_nanos::float8 as cost_nanos, latency_ms from instance_calls where instance_id = $1', [id]);
    expect(row).toEqual({ output: 'out 1', cost_nanos: 1_000_000, latency_ms: 1 });
    expect(await instance(database, id)).toMatchObject({ status: 'completed', answer: 'out 1', model_calls: 1 });
  });

  it('pipelined (a synchronous run): calls go on at once, settle() waits for the checkpoints', async () => {
    const id = await insertHeld();
    const journal = new InstanceJournal(database, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: () => {}, pipelined: true });
    for (const n of [1, 2, 3]) await journal.callCompleted(place(n), call(n), { prompt: 'p', survived: true, progress: progress(n) });
    expect(journal.beforeCall()).toBeUndefined();
    await journal.settle();
    expect((await callKeys(database, id)).sort()).toEqual(['1.fan.1', '1.fan.2', '1.fan.3']);
    expect(await journal.finish({ status: 'completed', answer: 'done', progress: progress(3) }, [])).toBeInstanceOf(Date);
    journal.close();
    expect((await events(database, id)).map((e) => e.type)).toEqual(['node.completed', 'node.completed', 'node.completed', 'instance.completed']);
  });

  it('pipelined: the checkpoints of calls finishing one after another are gathered into one write', async () => {
    const id = await insertHeld();
    const { db, statements } = counting();
    const journal = new InstanceJournal(db, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: () => {}, pipelined: true });
    for (const n of [1, 2, 3]) {
      await journal.callCompleted(place(n), call(n), { prompt: 'p', survived: true, progress: progress(n) });
      await new Promise((resolve) => setImmediate(resolve));
    }
    await journal.settle();
    journal.close();
    expect(statements).toEqual(['ladder_journal_flush']);
    expect((await callKeys(database, id)).sort()).toEqual(['1.fan.1', '1.fan.2', '1.fan.3']);
    expect(await instance(database, id)).toMatchObject({ model_calls: 3, status: 'running' });
  });

  it('pipelined: gathered checkpoints and their events are written without waiting for settle()', async () => {
    const id = await insertHeld();
    const journal = new InstanceJournal(database, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: () => {}, pipelined: true });
    await journal.callCompleted(place(1), call(1), { prompt: 'p', survived: true, progress: progress(1) });
    await waitFor(async () => (await callKeys(database, id)).length > 0, 15_000, 'the checkpoint');
    expect(await callKeys(database, id)).toEqual(['1.fan.1']);
    expect((await events(database, id)).map((e) => e.type)).toEqual(['node.completed']);
    journal.close();
  });

  it('pipelined, failed without settle(): the gathered checkpoints go out with the outcome, the final event after theirs', async () => {
    const id = await insertHeld();
    const { db, statements, eventTypes } = counting();
    const journal = new InstanceJournal(db, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: () => {}, pipelined: true });
    for (const n of [1, 2]) await journal.callCompleted(place(n), call(n), { prompt: 'p', survived: true, progress: progress(n) });
    const error = new ApiError(502, 'api_error', 'upstream_error', 'The vendor failed.');
    expect(await journal.finish({ status: 'failed', error, progress: progress(2) }, [])).toBeInstanceOf(Date);
    journal.close();
    expect(statements).toEqual(['ladder_journal_finish']);
    expect(eventTypes).toEqual([['node.completed', 'node.completed', 'instance.failed']]);
    expect((await callKeys(database, id)).sort()).toEqual(['1.fan.1', '1.fan.2']);
    expect((await events(database, id)).map((e) => [e.seq, e.type])).toEqual([[1, 'node.completed'], [2, 'node.completed'], [3, 'instance.failed']]);
    expect(await instance(database, id)).toMatchObject({ status: 'failed', model_calls: 2 });
  });

  describe('a background run whose lease surely holds: the next call goes out alongside the write of the checkpoints before it', () => {
    /** The database, holding each checkpoint write until `release()`. */
    function heldWrites() {
      const writes: Array<{ release: () => void; done: Promise<unknown> }> = [];
      const db: Pick<Database, 'query' | 'queryRelaxed'> = {
        query: (text, params, name) => database.query(text, params, name),
        queryRelaxed: async <Row>(name: string, text: string, params?: unknown[]) => {
          let release!: () => void;
          const gate = new Promise<void>((resolve) => (release = resolve));
          const done = gate.then(() => database.queryRelaxed<Row>(name, text, params));
          writes.push({ release, done });
          return done;
        },
      };
      return { db, writes };
    }

    it('a call goes out while the checkpoint before it is written; the call after it waits for that write, then starts the next', async () => {
      const id = await insertHeld();
      const { db, writes } = heldWrites();
      const journal = new InstanceJournal(db, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: () => {}, surelyHeld: () => true });
      await journal.callCompleted(place(1), call(1), { prompt: 'p1', survived: true, progress: progress(1) });
      // Call 2 goes out: the write of checkpoint 1 is sent, not stored.
      await journal.beforeCall();
      expect(writes).toHaveLength(1);
      expect(await callKeys(database, id)).toEqual([]);
      await journal.callCompleted(place(2), call(2), { prompt: 'p2', survived: true, progress: progress(2) });
      // Call 3 waits for the write under way: no call goes out with two writes unfinished.
      let third = false;
      const before3 = journal.beforeCall()!.then(() => (third = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(third).toBe(false);
      expect(writes).toHaveLength(1);
      writes[0]!.release();
      await before3;
      expect(await callKeys(database, id)).toEqual(['1.fan.1']);
      // ... and starts the write of checkpoint 2 as it goes.
      await waitFor(() => writes.length === 2, 15_000, 'the second write');
      writes[1]!.release();
      await journal.settle();
      journal.close();
      expect((await callKeys(database, id)).sort()).toEqual(['1.fan.1', '1.fan.2']);
    });

    it('without it, the next call waits until the checkpoints are stored', async () => {
      const id = await insertHeld();
      const { db, writes } = heldWrites();
      let sure = true;
      const journal = new InstanceJournal(db, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: () => {}, surelyHeld: () => sure });
      sure = false;
      await journal.callCompleted(place(1), call(1), { prompt: 'p1', survived: true, progress: progress(1) });
      let gone = false;
      const before = journal.beforeCall()!.then(() => (gone = true));
      await waitFor(() => writes.length === 1, 15_000, 'the write');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(gone).toBe(false);
      writes[0]!.release();
      await before;
      expect(await callKeys(database, id)).toEqual(['1.fan.1']);
      journal.close();
    });

    it('judged as the call goes out: a lease no longer sure once the write before is over makes the call wait for its own', async () => {
      const id = await insertHeld();
      const { db, writes } = heldWrites();
      let sure = true;
      const journal = new InstanceJournal(db, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: () => {}, surelyHeld: () => sure });
      await journal.callCompleted(place(1), call(1), { prompt: 'p1', survived: true, progress: progress(1) });
      await journal.beforeCall();
      await journal.callCompleted(place(2), call(2), { prompt: 'p2', survived: true, progress: progress(2) });
      let gone = false;
      const before = journal.beforeCall()!.then(() => (gone = true));
      sure = false;
      writes[0]!.release();
      await waitFor(() => writes.length === 2, 15_000, 'the second write');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(gone).toBe(false);
      writes[1]!.release();
      await before;
      expect((await callKeys(database, id)).sort()).toEqual(['1.fan.1', '1.fan.2']);
      journal.close();
    });

    it('a write that finds the run no longer ours stops the call it went alongside (onLost) and refuses the next', async () => {
      const id = await insertHeld(2);
      const { db, writes } = heldWrites();
      const lost: unknown[] = [];
      const journal = new InstanceJournal(db, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: (e) => lost.push(e), surelyHeld: () => true });
      await journal.callCompleted(place(1), call(1), { prompt: 'p1', survived: true, progress: progress(1) });
      await journal.beforeCall();
      expect(lost).toEqual([]);
      writes[0]!.release();
      await waitFor(() => lost.length === 1, 15_000, 'the run reported lost');
      expect(journal.lost).toBe(true);
      await expect(journal.beforeCall()).rejects.toMatchObject({ code: 'run_interrupted' });
      journal.close();
      expect(await callKeys(database, id)).toEqual([]);
    });
  });

  // A background run learns it before its next call (beforeCall), a synchronous one before its outcome (settle).
  it.each([
    ['background', false, (journal: InstanceJournal) => journal.beforeCall()],
    ['pipelined', true, (journal: InstanceJournal) => journal.settle()],
  ] as const)('%s with a stale fence: the run is reported lost and nothing is written', async (_kind, pipelined, wait) => {
    const id = await insertHeld(2);
    const lost: unknown[] = [];
    const journal = new InstanceJournal(database, { id, fence: 1 }, { lastSeq: 0, stepsTotal: 1, recorded: null, onLost: (e) => lost.push(e), pipelined });
    await journal.callCompleted(place(1), call(1), { prompt: 'p', survived: true, progress: progress(1) });
    await expect(wait(journal)).rejects.toMatchObject({ code: 'run_interrupted' });
    expect(lost).toHaveLength(1);
    expect(journal.lost).toBe(true);
    expect(await journal.finish({ status: 'completed', answer: 'late', progress: progress(1) }, [])).toBeNull();
    journal.close();
    expect(await callKeys(database, id)).toEqual([]);
    expect(await events(database, id)).toEqual([]);
    expect(await instance(database, id)).toMatchObject({ status: 'running', fence: 2, answer: null });
  });
});
