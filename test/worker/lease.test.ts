// The lease keeper: a renewal that comes too late stops a run where another process could take
// it over (PostgreSQL), and stops nothing on the embedded database, which one process owns.
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
});
