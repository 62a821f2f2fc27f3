// The lease keeper: a renewal that comes too late stops a run where another process could take
// it over (PostgreSQL), and stops nothing on the embedded database, which one process owns; a
// run is surely held while no other process can take it over.
import { describe, expect, it } from 'vitest';
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
