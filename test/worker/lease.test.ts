// The lease keeper: a renewal that comes too late stops a run where another process could take
// it over (PostgreSQL), and stops nothing on the embedded database, which one process owns; a
// run is surely held while no other process can take it over.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLeaseKeeper } from '../../src/worker/lease.js';

/** A database whose every statement waits until `answer()`: renewals that cannot come through. */
function stalledDatabase() {
  const waiting: Array<() => void> = [];
  return {
    queryRelaxed: <Row>(_name: string, _text: string, params?: unknown[]) =>
      new Promise<Row[]>((resolve) => waiting.push(() => resolve((params![0] as string[]).map((id) => ({ id, cancel: false })) as Row[]))),
    answer: () => waiting.splice(0).forEach((resolve) => resolve()),
  };
}

const held = { id: '00000000-0000-4000-8000-000000000001', fence: 1 };

describe('lease keeper', () => {
  for (const exclusive of [false, true]) {
    it(exclusive ? 'embedded: a run renewed too late goes on' : 'a run that could not be renewed for a whole lease is stopped: it lost its lease', async () => {
      const database = stalledDatabase();
      const keeper = createLeaseKeeper({ database, leaseMs: 60, checkMs: 10, exclusive });
      const controller = new AbortController();
      keeper.track(held, 'async', controller);
      expect(keeper.heldIds()).toEqual([held.id]);
      await new Promise((resolve) => setTimeout(resolve, 150));
      database.answer();
      await new Promise((resolve) => setImmediate(resolve)); // the renewal under way ends
      expect(controller.signal.aborted).toBe(!exclusive);
      if (!exclusive) expect((controller.signal.reason as Error).message).toContain('this process lost its lease on it');
      expect(keeper.heldIds()).toEqual(exclusive ? [held.id] : []);
      keeper.stop();
    });
  }

  it('a run is surely held while its last confirmed renewal is younger than two thirds of the lease (PostgreSQL)', async () => {
    const database = stalledDatabase();
    const keeper = createLeaseKeeper({ database, leaseMs: 300, checkMs: 10_000 });
    expect(keeper.surelyHeld(held.id)).toBe(false); // not held here
    keeper.track(held, 'async', new AbortController());
    expect(keeper.surelyHeld(held.id)).toBe(true);
    // The lease counts from the statement that took it, not from the start of the run.
    const other = { id: '00000000-0000-4000-8000-000000000002', fence: 1 };
    keeper.track(other, 'async', new AbortController(), performance.now() - 201);
    expect(keeper.surelyHeld(other.id)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 210));
    expect(keeper.surelyHeld(held.id)).toBe(false);
    // A renewal sent now and confirmed makes both sure again.
    const renewal = keeper.check();
    database.answer();
    await renewal;
    expect(keeper.surelyHeld(held.id)).toBe(true);
    expect(keeper.surelyHeld(other.id)).toBe(true);
    keeper.stop();
  });

  it('embedded: a run held here is always surely held (no other process can take it over)', async () => {
    const keeper = createLeaseKeeper({ database: stalledDatabase(), leaseMs: 30, checkMs: 10_000, exclusive: true });
    keeper.track(held, 'async', new AbortController(), performance.now() - 1_000);
    expect(keeper.surelyHeld(held.id)).toBe(true);
    expect(keeper.surelyHeld('00000000-0000-4000-8000-000000000002')).toBe(false);
    keeper.stop();
  });
});

describe('lease keeper: renewal cadence', () => {
  afterEach(() => vi.useRealTimers());

  /** A database that answers at once and records which statement each check sent. */
  function answeringDatabase() {
    const sent: Array<[string, number]> = [];
    return {
      sent,
      queryRelaxed: async <Row>(name: string, _text: string, params?: unknown[]) => {
        sent.push([name, performance.now()]);
        return (params![0] as string[]).map((id) => ({ id, cancel: false })) as Row[];
      },
    };
  }

  it('renews at every check when checks come every third of the lease (1,000 / 333 ms)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'performance'] });
    const database = answeringDatabase();
    const keeper = createLeaseKeeper({ database, leaseMs: 1_000, checkMs: 333 });
    const controller = new AbortController();
    keeper.track(held, 'async', controller);
    await vi.advanceTimersByTimeAsync(333 * 6);
    expect(database.sent.map(([name]) => name)).toEqual(Array(6).fill('ladder_lease_renew'));
    expect(controller.signal.aborted).toBe(false);
    keeper.stop();
  });

  it('renews every third of the lease, and only reads at the checks in between (15,000 / 500 ms)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'performance'] });
    const database = answeringDatabase();
    const keeper = createLeaseKeeper({ database, leaseMs: 15_000, checkMs: 500 });
    const start = performance.now();
    keeper.track(held, 'async', new AbortController());
    await vi.advanceTimersByTimeAsync(15_000);
    const renewals = database.sent.filter(([name]) => name === 'ladder_lease_renew').map(([, at]) => at - start);
    expect(renewals).toEqual([500, 5_500, 10_500]);
    expect(database.sent).toHaveLength(30);
    keeper.stop();
  });
});
