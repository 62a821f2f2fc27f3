// Spend held by calls in flight, in the shared spend counters themselves, so that every process
// sees it (docs/quotas.md, "Spend quotas"). Before a call, one atomic upsert per limited counter
// adds the call's worst case to the counter's `amount`, and only while the amount stays within
// the limit: the counter holds what ledger batches recorded plus what calls in flight hold.
// When the call ends, the part of its hold it did not cost is given back at once; the part it
// cost is given back only once a ledger batch has added that much to the same counter, so the
// counter never shows less than has been spent. With vendors that honour
// the cap, the spend of admitted calls therefore never exceeds the limit, at any concurrency and
// on any number of processes.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { quotaWindows, type QuotaScope } from '../db/schema.js';
import type { SpendMetric } from './spend.js';

/** One counter: a subject's spend in one UTC day or month. */
export interface SpendCounter {
  scope: QuotaScope;
  id: string;
  metric: SpendMetric;
  windowStart: number;
}

interface Release extends SpendCounter {
  amount: number;
}

const keyOf = (c: SpendCounter) => `${c.scope}:${c.id}:${c.metric}:${c.windowStart}`;
const MAX_COUNTERS = 100_000;

export function createSpendHolds(db: Db, onError: (error: unknown) => void) {
  let queue: Release[] = [];
  /** Per counter: held for costs that finished calls have and the ledger has not yet recorded. */
  const costs = new Map<string, Release>();
  let writing: Promise<void> | null = null;
  let again = false;

  async function write(entries: Release[]): Promise<void> {
    const merged = new Map<string, Release>();
    for (const e of entries) {
      const key = keyOf(e);
      const m = merged.get(key);
      if (m) m.amount += e.amount;
      else merged.set(key, { ...e });
    }
    const rows = [...merged.values()];
    const column = <T>(value: (r: Release) => T) => sql.param(rows.map(value));
    await db.execute(sql`
      update quota_windows q set amount = q.amount - v.amount
      from unnest(${column((r) => r.scope)}::text[], ${column((r) => r.id)}::uuid[], ${column((r) => r.metric)}::text[],
        ${column((r) => new Date(r.windowStart).toISOString())}::timestamptz[], ${column((r) => r.amount)}::bigint[])
        as v(scope, subject_id, metric, window_start, amount)
      where q.scope = v.scope and q.subject_id = v.subject_id and q.metric = v.metric and q.window_start = v.window_start`);
  }

  /** Writes every queued release in one statement; one write at a time, the next coalescing what came meanwhile. */
  function writeDue(): Promise<void> {
    if (writing) {
      again = true;
      return writing;
    }
    const due = queue;
    if (due.length === 0) return Promise.resolve();
    queue = [];
    writing = write(due)
      .catch((error: unknown) => {
        // Kept for the next attempt: a hold not given back only makes the quota stricter.
        queue.push(...due);
        onError(error);
      })
      .finally(() => {
        writing = null;
        if (again) {
          again = false;
          void writeDue();
        }
      });
    return writing;
  }

  return {
    /**
     * Adds up to `want` nanos to the counter, if at least `least` fits under `limit`. Resolves with
     * what was added (0 when `least` did not fit) and the counter's amount after it.
     */
    async hold(counter: SpendCounter, limit: number, want: number, least: number): Promise<{ held: number; amount: number }> {
      const fits = sql`${quotaWindows.amount} + ${least}::bigint <= ${limit}::bigint`;
      // In ON CONFLICT ... SET, "quota_windows"."amount" is the row's value before this update.
      const after = sql`case when ${fits} then ${quotaWindows.amount} + least(${want}::bigint, ${limit}::bigint - ${quotaWindows.amount}) else ${quotaWindows.amount} end`;
      const first = least <= limit ? Math.min(want, limit) : 0;
      const [row] = await db
        .insert(quotaWindows)
        .values({ scope: counter.scope, subjectId: counter.id, metric: counter.metric, windowStart: new Date(counter.windowStart), amount: first, lastGrant: first })
        .onConflictDoUpdate({
          target: [quotaWindows.scope, quotaWindows.subjectId, quotaWindows.metric, quotaWindows.windowStart],
          set: { amount: after, lastGrant: sql`${after} - ${quotaWindows.amount}` },
        })
        .returning({ amount: quotaWindows.amount, lastGrant: quotaWindows.lastGrant });
      return { held: row?.lastGrant ?? 0, amount: row?.amount ?? 0 };
    },

    /**
     * Gives `amount` back to the counter: at once, or (`isCost`, the call's recorded cost) once
     * a ledger batch has added as much to the counter (see `recorded`).
     */
    release(counter: SpendCounter, amount: number, isCost: boolean): void {
      if (!(amount > 0)) return;
      if (!isCost) {
        queue.push({ ...counter, amount });
        void writeDue();
        return;
      }
      const key = keyOf(counter);
      const held = costs.get(key);
      if (held) held.amount += amount;
      else {
        if (costs.size >= MAX_COUNTERS) costs.clear();
        costs.set(key, { ...counter, amount });
      }
    },

    /**
     * A ledger batch added `amount` to the counter: as much of the costs held there is given back.
     * Costs are recorded in the order calls end, and a call's cost is held before it is recorded,
     * so what a batch added was held (except what calls cost beyond their hold).
     */
    recorded(counter: SpendCounter, amount: number): void {
      const key = keyOf(counter);
      const held = costs.get(key);
      if (!held || !(amount > 0)) return;
      const given = Math.min(amount, held.amount);
      held.amount -= given;
      if (held.amount <= 0) costs.delete(key);
      queue.push({ ...counter, amount: given });
      void writeDue();
    },

    /**
     * Before a hold: waits for the releases queued so far to be written (at most the write under
     * way and one more), so that a call following another right away sees what it gave back.
     */
    async caughtUp(): Promise<void> {
      if (!writing && queue.length === 0) return;
      if (writing) await writing;
      if (queue.length > 0) await writeDue();
      else if (writing) await writing;
    },

    /** Resolves once every release queued so far is written (or has failed and is queued again). */
    async written(): Promise<void> {
      while (writing || queue.length > 0) {
        if (!writing) {
          const before = queue.length;
          await writeDue();
          // A failed write puts its releases back: do not spin on a database that is down.
          if (queue.length >= before) return;
        } else await writing;
      }
    },

    /** At shutdown, after the ledger's last batch: every hold still kept is given back. */
    async releaseAll(): Promise<void> {
      queue.push(...costs.values());
      costs.clear();
      while (writing) await writing;
      await writeDue();
    },
  };
}

export type SpendHolds = ReturnType<typeof createSpendHolds>;
