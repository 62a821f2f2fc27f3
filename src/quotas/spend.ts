// What each limited subject has spent in the current UTC day and month, as this process sees
// it: the shared total as of the last ledger batch or refresh (`base`, which includes what
// processes hold for calls in flight and in their slices, see spend-holds.ts), plus what this
// process recorded since (`pending`). Ledger batches advance the shared counters and bring back
// the totals, so other processes' spending is seen within one flush interval.
import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { quotaWindows, type QuotaScope } from '../db/schema.js';
import { windowOf } from './windows.js';

export type SpendMetric = 'usd_day' | 'usd_month';
export const SPEND_METRICS: SpendMetric[] = ['usd_day', 'usd_month'];

interface View {
  scope: QuotaScope;
  id: string;
  metric: SpendMetric;
  windowStart: number;
  base: number;
  pending: number;
  usedAt: number;
}

/** One delta of a ledger batch, and the total the database holds after it. */
export interface SpendDelta {
  scope: QuotaScope;
  id: string;
  metric: SpendMetric;
  windowStart: number;
  amount: number;
}

const MAX_VIEWS = 100_000;
// Views unused this long are no longer refreshed (and are reloaded when used again).
const IDLE_MS = 120_000;

/** What spend-holds.ts needs to hear of ledger batches: the held costs each takes off each counter, and when to finish its writes. */
export interface FlushListener {
  /**
   * Of what a ledger batch is about to add to a counter (`delta.amount`), claims the part this
   * process holds there for the costs of finished calls, and returns it: the batch takes it off
   * in the same statement, so the counter never counts a cost twice, not even for a moment.
   */
  claimCosts(delta: SpendDelta): number;
  /** The batch that claimed `claimed` was rolled back: those costs are held again, for the batches that record them. */
  unclaimCosts(delta: SpendDelta, claimed: number): void;
  /** Resolves once the releases started so far are written. */
  written(): Promise<void>;
}

const NO_LISTENER: FlushListener = { claimCosts: () => 0, unclaimCosts: () => {}, written: async () => {} };

export function createSpendTracker(db: Db, clock: () => number, listener: FlushListener = NO_LISTENER) {
  const views = new Map<string, View>();
  const keyOf = (scope: QuotaScope, id: string, metric: SpendMetric) => `${scope}:${id}:${metric}`;

  async function load(scope: QuotaScope, id: string, metric: SpendMetric, windowStart: number): Promise<number> {
    const [row] = await db
      .select({ amount: quotaWindows.amount })
      .from(quotaWindows)
      .where(
        and(eq(quotaWindows.scope, scope), eq(quotaWindows.subjectId, id), eq(quotaWindows.metric, metric), eq(quotaWindows.windowStart, new Date(windowStart))),
      );
    return row?.amount ?? 0;
  }

  return {
    /** Spent in the window `now` falls in. A round trip only the first time this process sees the subject. */
    async spent(scope: QuotaScope, id: string, metric: SpendMetric, now: number): Promise<number> {
      const key = keyOf(scope, id, metric);
      const windowStart = windowOf(metric, now).start;
      let view = views.get(key);
      if (!view) {
        const base = await load(scope, id, metric, windowStart);
        view = views.get(key);
        if (!view) {
          if (views.size >= MAX_VIEWS) views.clear();
          view = { scope, id, metric, windowStart, base, pending: 0, usedAt: now };
          views.set(key, view);
        }
      }
      if (view.windowStart !== windowStart) {
        // A new day or month starts from zero; the next refresh brings in other processes' spend.
        Object.assign(view, { windowStart, base: 0, pending: 0 });
      }
      view.usedAt = now;
      return view.base + view.pending;
    },

    /** A call's cost, recorded in this process (the ledger will carry it to the database). */
    add(scope: QuotaScope, id: string, costNanos: number, at: number): void {
      for (const metric of SPEND_METRICS) {
        const view = views.get(keyOf(scope, id, metric));
        if (view && view.windowStart === windowOf(metric, at).start) view.pending += costNanos;
      }
    },

    /** What a ledger batch adding `delta` takes off the counter's held costs in its own statement (FlushListener.claimCosts). */
    claimCosts(delta: SpendDelta): number {
      return listener.claimCosts(delta);
    },

    /** The batch was rolled back (FlushListener.unclaimCosts). */
    unclaimCosts(delta: SpendDelta, claimed: number): void {
      listener.unclaimCosts(delta, claimed);
    },

    /** After a ledger batch: `flushed` left this process's pending, `total` is the database's sum. */
    applyFlushed(delta: SpendDelta, flushed: number): void {
      const view = views.get(keyOf(delta.scope, delta.id, delta.metric));
      if (!view || view.windowStart !== delta.windowStart) return;
      view.pending = Math.max(0, view.pending - flushed);
      view.base = delta.amount;
    },

    /** Reloads the totals of subjects used recently whose counters this batch did not touch. */
    async refresh(skip: Set<string>): Promise<void> {
      // A batch's holds are given back before its flush ends, so the totals read here include that.
      await listener.written();
      const now = clock();
      const stale = [...views.values()].filter((v) => now - v.usedAt < IDLE_MS && !skip.has(keyOf(v.scope, v.id, v.metric)));
      for (const v of views.values()) if (now - v.usedAt >= IDLE_MS) views.delete(keyOf(v.scope, v.id, v.metric));
      if (stale.length === 0) return;
      const rows = await db
        .select()
        .from(quotaWindows)
        .where(
          and(
            inArray(quotaWindows.subjectId, [...new Set(stale.map((v) => v.id))]),
            inArray(quotaWindows.metric, SPEND_METRICS),
            inArray(quotaWindows.windowStart, [...new Set(stale.map((v) => v.windowStart))].map((t) => new Date(t))),
          ),
        );
      for (const view of stale) {
        const row = rows.find((r) => r.scope === view.scope && r.subjectId === view.id && r.metric === view.metric && r.windowStart.getTime() === view.windowStart);
        // Only ever forward: a batch of this process may have landed after the read.
        if (row && row.amount > view.base) view.base = row.amount;
      }
    },

    keyOf,
  };
}

export type SpendTracker = ReturnType<typeof createSpendTracker>;
