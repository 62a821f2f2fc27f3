// Holds given back to the shared spend counters (spend-holds.ts), written off the request path:
// every release queued while a write is under way goes out in the next one, merged per counter,
// as one named statement. A failed write keeps its releases for the next attempt: a hold not
// given back only makes the quota stricter.
import type { Database } from '../db/client.js';
import type { QuotaScope } from '../db/schema.js';
import type { SpendMetric } from './spend.js';

/** One counter: a subject's spend in one UTC day or month. */
export interface SpendCounter {
  scope: QuotaScope;
  id: string;
  metric: SpendMetric;
  windowStart: number;
}

export interface Release extends SpendCounter {
  amount: number;
}

export const counterKey = (c: SpendCounter) => `${c.scope}:${c.id}:${c.metric}:${c.windowStart}`;

const RELEASE_SQL = `update quota_windows q set amount = q.amount - v.amount
from unnest($1::text[], $2::uuid[], $3::text[], $4::timestamptz[], $5::bigint[]) as v(scope, subject_id, metric, window_start, amount)
where q.scope = v.scope and q.subject_id = v.subject_id and q.metric = v.metric and q.window_start = v.window_start`;

export function createReleaseQueue(database: Pick<Database, 'query'>, onError: (error: unknown) => void) {
  let queue: Release[] = [];
  let writing: Promise<void> | null = null;
  let again = false;

  async function write(entries: Release[]): Promise<void> {
    const merged = new Map<string, Release>();
    for (const e of entries) {
      const key = counterKey(e);
      const m = merged.get(key);
      if (m) m.amount += e.amount;
      else merged.set(key, { scope: e.scope, id: e.id, metric: e.metric, windowStart: e.windowStart, amount: e.amount });
    }
    const rows = [...merged.values()];
    await database.query(
      RELEASE_SQL,
      [rows.map((r) => r.scope), rows.map((r) => r.id), rows.map((r) => r.metric), rows.map((r) => new Date(r.windowStart).toISOString()), rows.map((r) => r.amount)],
      'quota_spend_release',
    );
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
    /** Gives `amount` nanos back to the counter, in the next write. */
    giveBack(counter: SpendCounter, amount: number): void {
      if (!(amount > 0)) return;
      queue.push({ scope: counter.scope, id: counter.id, metric: counter.metric, windowStart: counter.windowStart, amount });
      void writeDue();
    },

    /**
     * Before going to the counters: waits for the releases queued so far to be written (at most
     * the write under way and one more), so that what was given back is seen there.
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

    /** At shutdown: one last attempt at everything queued. */
    async drain(): Promise<void> {
      while (writing) await writing;
      await writeDue();
    },
  };
}
