// The usage ledger: every model call (direct, or one of a ladder run's) is recorded here and
// written in batches off the request path, every USAGE_FLUSH_MS or once USAGE_FLUSH_ROWS rows
// wait, whichever comes first, and at shutdown. Each batch also adds to the hourly totals that
// reports read (usage_hourly) and advances the shared spend counters of the accounts and keys
// it charges, all in one statement, under an id that makes a retried batch count once. A
// crash loses at most the rows still buffered: one flush interval's worth (or up to
// USAGE_FLUSH_ROWS).
//
// Rows hold text and numbers that came from callers and vendors; `record` makes them storable
// first, so that no request can make a batch fail. Should a row still be refused, the batch is
// split until that row stands alone, and it is set aside: it never holds up the rows behind it.
import { randomUUID } from 'node:crypto';
import { and, inArray, lt } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { isDataError, loggableError } from '../db/errors.js';
import { quotaWindows } from '../db/schema.js';
import type { SpendTracker } from '../quotas/spend.js';
import { counterKey } from '../quotas/spend-releases.js';
import { storableAmount, storableCount } from '../storable.js';
import { storableText } from '../unicode.js';
import type { UsageEntry } from './entry.js';
import { forgetOldBatches, MAX_BATCH_ROWS, storeBatch } from './ledger-write.js';
import { spendDeltas } from './spend-deltas.js';

export interface LedgerOptions {
  flushMs: number;
  flushRows: number;
  spend: SpendTracker;
  clock: () => number;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Told of each row the database refused and the ledger set aside (a metric). */
  onRejected?: () => void;
}

// While the database is unreachable rows wait in memory, up to this many; older ones are dropped.
const MAX_BUFFERED = 200_000;
// Minute counters are needed for a minute; they are swept this often, once an hour old.
const SWEEP_EVERY_MS = 600_000;

/** Rows written together, under an id they keep across retries (src/usage/ledger-write.ts). */
interface Batch {
  id: string;
  rows: UsageEntry[];
  /**
   * The held costs it takes off each counter (by counterKey), claimed at its first attempt and
   * kept for the next ones: an attempt whose commit's answer was lost took them off already.
   */
  claimed?: Map<string, number>;
}
const batchOf = (rows: UsageEntry[]): Batch => ({ id: randomUUID(), rows });
/** The rows as batches of at most MAX_BATCH_ROWS, each one statement. */
const batchesOf = (rows: UsageEntry[]): Batch[] => {
  const batches: Batch[] = [];
  for (let i = 0; i < rows.length; i += MAX_BATCH_ROWS) batches.push(batchOf(rows.slice(i, i + MAX_BATCH_ROWS)));
  return batches;
};
const rowsIn = (batches: Batch[]) => batches.reduce((n, b) => n + b.rows.length, 0);

// Model names are at most 256 characters where a request gives them; a longer one is cut, not refused.
const MAX_TEXT = 256;
const text = (value: string) => storableText(value.length > MAX_TEXT ? value.slice(0, MAX_TEXT) : value);
const optionalText = (value: string | null) => (value === null ? null : text(value));

/** The entry as it can be written whatever a caller or vendor put in it (src/unicode.ts, src/storable.ts), its time in whole milliseconds. */
function storableEntry(entry: UsageEntry): UsageEntry {
  const { usage } = entry;
  return {
    at: Number.isFinite(entry.at) ? Math.round(entry.at) : Date.now(),
    accountId: entry.accountId,
    apiKeyId: entry.apiKeyId,
    provider: optionalText(entry.provider),
    model: text(entry.model),
    ladder: optionalText(entry.ladder),
    instanceId: entry.instanceId,
    usage: { prompt_tokens: storableCount(usage.prompt_tokens), completion_tokens: storableCount(usage.completion_tokens), total_tokens: storableCount(usage.total_tokens) },
    costNanos: storableAmount(entry.costNanos),
    outcome: text(entry.outcome),
  };
}

export function createLedger(database: Pick<Database, 'db' | 'query'>, options: LedgerOptions) {
  const { db } = database;
  let buffer: UsageEntry[] = [];
  // Batches a flush could not write for want of a database, retried first and under their own id.
  let retry: Batch[] = [];
  let flushing: Promise<void> | null = null;
  let lastSweep = 0;
  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref();

  /**
   * Rows, hourly totals and spend counters in one statement: all of the batch or none. Each
   * counter goes up by what the batch records less the costs this process held there for those
   * calls (spend-holds.ts), in that statement: recorded and still held, a cost would count twice.
   * A batch written before (its commit's answer was lost) adds nothing: the counters hold it, its
   * held costs taken off; the statement still reads their totals.
   */
  async function writeBatch(batch: Batch): Promise<void> {
    const deltas = spendDeltas(batch.rows);
    const claimed = (batch.claimed ??= new Map(deltas.list.map((d) => [counterKey(d), options.spend.claimCosts(d)])));
    const counted = deltas.list.map((d) => Object.assign({}, d, { amount: d.amount - claimed.get(counterKey(d))! }));
    const { totals } = await storeBatch(database, batch.id, batch.rows, counted);
    const touched = new Set<string>();
    for (const total of totals) {
      const flushed = deltas.amountOf(total.scope, total.id, total.metric, total.windowStart);
      options.spend.applyFlushed(total, flushed);
      touched.add(options.spend.keyOf(total.scope, total.id, total.metric));
    }
    // The rows are written: a failed refresh of the other views is retried by the next flush.
    await options.spend.refresh(touched).catch((error: unknown) => options.log.warn({ err: loggableError(error) }, 'spend refresh failed; will retry'));
  }

  /**
   * Writes a batch; if the database refuses it for its values, writes each half on its own (the
   * whole was rolled back, so the halves are new batches), down to single rows, and sets aside
   * a row refused alone. Returns the batches left to write when the database failed otherwise
   * (it is not there): they wait for the next flush, each under its id.
   */
  async function writeOrSplit(batch: Batch): Promise<{ left: Batch[]; error?: unknown }> {
    try {
      await writeBatch(batch);
      return { left: [] };
    } catch (error) {
      if (!isDataError(error)) return { left: [batch], error };
      // Refused, so rolled back: the costs it claimed are held again, for the batches that record them.
      for (const d of spendDeltas(batch.rows).list) options.spend.unclaimCosts(d, batch.claimed?.get(counterKey(d)) ?? 0);
      if (batch.rows.length === 1) {
        const row = batch.rows[0]!;
        options.log.error({ err: loggableError(error), account_id: row.accountId, model: row.model, at: new Date(row.at).toISOString() }, 'usage ledger row refused by the database; set aside');
        options.onRejected?.();
        return { left: [] };
      }
      const half = Math.ceil(batch.rows.length / 2);
      const second = batchOf(batch.rows.slice(half));
      const first = await writeOrSplit(batchOf(batch.rows.slice(0, half)));
      if (first.left.length > 0) return { left: first.left.concat(second), error: first.error };
      return writeOrSplit(second);
    }
  }

  /** Keeps batches for the next flush, dropping the oldest rows past MAX_BUFFERED. */
  function keep(batches: Batch[], error: unknown): void {
    retry = batches;
    let excess = rowsIn(retry) + buffer.length - MAX_BUFFERED;
    if (excess > 0) {
      options.log.error({ dropped: excess }, 'usage ledger buffer full: oldest rows dropped');
      while (excess > 0 && retry.length > 0) {
        const oldest = retry[0]!;
        if (oldest.rows.length <= excess) {
          excess -= oldest.rows.length;
          retry.shift();
        } else {
          retry[0] = { id: oldest.id, rows: oldest.rows.slice(excess) };
          excess = 0;
        }
      }
    }
    // Never the error itself: drizzle's carries the statement with every row of the batch.
    options.log.warn({ err: loggableError(error), buffered: rowsIn(retry) + buffer.length }, 'usage ledger flush failed; will retry');
  }

  async function flushOnce(): Promise<void> {
    const batches = buffer.length > 0 ? retry.concat(batchesOf(buffer)) : retry;
    buffer = [];
    retry = [];
    for (let i = 0; i < batches.length; i++) {
      const { left, error } = await writeOrSplit(batches[i]!);
      if (left.length > 0) return keep(left.concat(batches.slice(i + 1)), error);
    }
    // Housekeeping after the rows are safe: its failure must not put written rows back.
    try {
      if (batches.length === 0) await options.spend.refresh(new Set());
      const now = options.clock();
      if (now - lastSweep >= SWEEP_EVERY_MS) {
        lastSweep = now;
        await db
          .delete(quotaWindows)
          .where(and(inArray(quotaWindows.metric, ['requests', 'tokens']), lt(quotaWindows.windowStart, new Date(now - 3_600_000))));
        await forgetOldBatches(db);
      }
    } catch (error) {
      options.log.warn({ err: loggableError(error) }, 'usage ledger housekeeping failed; will retry');
    }
  }

  /** Writes everything recorded so far (a flush already running is waited for first). */
  async function flush(): Promise<void> {
    while (flushing) await flushing;
    flushing = flushOnce().finally(() => {
      flushing = null;
    });
    await flushing;
  }

  return {
    record(recorded: UsageEntry): void {
      const entry = storableEntry(recorded);
      buffer.push(entry);
      options.spend.add('account', entry.accountId, entry.costNanos, entry.at);
      if (entry.apiKeyId) options.spend.add('api_key', entry.apiKeyId, entry.costNanos, entry.at);
      if (buffer.length >= options.flushRows && !flushing) void flush();
    },
    flush,
    /** Rows recorded and not yet written. */
    get buffered(): number {
      return buffer.length + rowsIn(retry);
    },
    async close(): Promise<void> {
      clearInterval(timer);
      await flush();
    },
  };
}

export type Ledger = ReturnType<typeof createLedger>;
