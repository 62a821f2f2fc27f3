// The leases of the runs this process holds, background and synchronous alike. One timer
// serves them all: every `checkMs` one query reads their cancel requests and whether each is
// still ours, and at least every third of the lease the same query renews them (guarded by the
// fence).
// A run that is no longer ours, or that could not be renewed in time, is aborted here and
// writes nothing more; a cancel request aborts it as cancelled. On the embedded database no
// other process can take a run over (one process owns the data directory), so a renewal that
// comes late there (an overloaded machine) stops nothing: the run goes on and is renewed late.
// Times are the monotonic clock's (performance.now()): a wall clock set back must not make a
// lease look younger than it is.
import type { Database } from '../db/client.js';
import type { ApiError } from '../errors.js';
import { runCancelled } from '../ladders/engine/limits.js';
import { leaseLost } from './errors.js';
import type { HeldRun } from './journal.js';

export interface LeaseLogger {
  warn(obj: object, msg: string): void;
}

export interface LeaseKeeperOptions {
  database: Pick<Database, 'queryRelaxed'>;
  leaseMs: number;
  checkMs: number;
  /** No other process can hold a lease on this database (the embedded one): late renewals stop no run. */
  exclusive?: boolean;
  log?: LeaseLogger;
}

export type RunKind = 'sync' | 'async';

interface LocalRun extends HeldRun {
  kind: RunKind;
  controller: AbortController;
  /** When the last renewal the database confirmed was sent (performance.now()). */
  renewedAt: number;
}

const RENEW_SQL = `
UPDATE instances i SET lease_expires_at = now() + $3::int * interval '1 millisecond'
FROM unnest($1::uuid[], $2::int[]) AS l(id, fence)
WHERE i.id = l.id AND i.fence = l.fence AND i.status = 'running'
RETURNING i.id, i.cancel_requested_at IS NOT NULL AS cancel`;

const CHECK_SQL = `
SELECT i.id FROM instances i, unnest($1::uuid[], $2::int[]) AS l(id, fence)
WHERE i.id = l.id AND i.fence = l.fence AND i.status = 'running' AND i.cancel_requested_at IS NULL`;

export function createLeaseKeeper(options: LeaseKeeperOptions) {
  const { database, leaseMs, checkMs } = options;
  const runs = new Map<string, LocalRun>();
  let timer: NodeJS.Timeout | null = null;
  let busy = false;
  let lastRenewal = -Infinity;
  let stopped = false;

  const abort = (run: LocalRun, reason: ApiError) => {
    runs.delete(run.id);
    run.controller.abort(reason);
  };

  async function tick(): Promise<void> {
    if (busy || runs.size === 0) return;
    busy = true;
    const local = [...runs.values()];
    const ids = local.map((r) => r.id);
    const fences = local.map((r) => r.fence);
    const started = performance.now();
    try {
      // Renewed when waiting for the next check would leave the lease unrenewed for more than a
      // third of it: with checks every third (1,000 / 333 ms) each one renews, where "a third has
      // passed" missed every other by a fraction of a millisecond and left one late renewal to spare.
      let renew = started - lastRenewal + checkMs > leaseMs / 3;
      if (!renew) {
        // Cheap read; a run that is not still ours and uncancelled is renewed at once, which tells which.
        const fine = new Set((await database.queryRelaxed<{ id: string }>('ladder_lease_check', CHECK_SQL, [ids, fences])).map((r) => r.id));
        renew = local.some((r) => !fine.has(r.id));
      }
      if (renew) {
        const rows = await database.queryRelaxed<{ id: string; cancel: boolean }>('ladder_lease_renew', RENEW_SQL, [ids, fences, leaseMs]);
        lastRenewal = started;
        const renewed = new Map(rows.map((r) => [r.id, r.cancel]));
        for (const run of local) {
          if (runs.get(run.id) !== run) continue;
          if (!renewed.has(run.id)) abort(run, leaseLost());
          else if (renewed.get(run.id)) abort(run, runCancelled());
          else run.renewedAt = started;
        }
      }
    } catch (error) {
      options.log?.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'lease check failed');
    } finally {
      busy = false;
    }
    // A lease that could not be renewed in time may already be another process's (never on an exclusive database).
    if (!options.exclusive) {
      const now = performance.now();
      for (const run of local) {
        if (runs.get(run.id) === run && now - run.renewedAt >= leaseMs) abort(run, leaseLost());
      }
    }
    if (runs.size === 0) stopTimer();
  }

  function startTimer(): void {
    if (timer || stopped) return;
    timer = setInterval(() => void tick(), checkMs);
    timer.unref();
  }

  function stopTimer(): void {
    if (timer) clearInterval(timer);
    timer = null;
  }

  return {
    /**
     * Starts watching a run whose lease this process just took; `controller` is aborted with the
     * reason it must stop. `leasedAt`: when the statement that took the lease was sent
     * (performance.now()), from which the lease counts.
     */
    track(run: HeldRun, kind: RunKind, controller: AbortController, leasedAt = performance.now()): () => void {
      const local: LocalRun = { id: run.id, fence: run.fence, kind, controller, renewedAt: leasedAt };
      runs.set(run.id, local);
      startTimer();
      return () => {
        if (runs.get(run.id) === local) runs.delete(run.id);
      };
    },

    /**
     * Whether no other process can have taken the run over, nor can before a third of the lease
     * has passed: always on an exclusive database; elsewhere while the last confirmed renewal is
     * younger than two thirds of the lease (a takeover needs the whole lease to have run out).
     * A background run's next call may then go out while its checkpoints are being written
     * (src/worker/journal.ts).
     */
    surelyHeld(instanceId: string): boolean {
      const run = runs.get(instanceId);
      if (!run) return false;
      return options.exclusive === true || performance.now() - run.renewedAt < (leaseMs * 2) / 3;
    },

    /** A cancel notice for an instance: aborts it if it runs here. */
    cancel(instanceId: string): void {
      const run = runs.get(instanceId);
      if (run) abort(run, runCancelled());
    },

    /** Aborts every local run of a kind with `reason` (shutdown); returns how many there were. */
    abortAll(reason: () => ApiError, kind: RunKind): number {
      const all = [...runs.values()].filter((r) => r.kind === kind);
      for (const run of all) abort(run, reason());
      return all.length;
    },

    get size(): number {
      return runs.size;
    },

    /** The runs held here: a sweep of this process must neither take them over nor fail them. */
    heldIds(): string[] {
      return [...runs.keys()];
    },

    /** Runs one check now (tests). */
    check: tick,

    stop(): void {
      stopped = true;
      stopTimer();
    },
  };
}

export type LeaseKeeper = ReturnType<typeof createLeaseKeeper>;
