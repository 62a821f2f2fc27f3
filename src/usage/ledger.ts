// The usage ledger: every model call (direct, or one of a ladder run's) is recorded here and
// written in batches off the request path, every USAGE_FLUSH_MS or once USAGE_FLUSH_ROWS rows
// wait, whichever comes first, and at shutdown. Each batch also advances the shared spend
// counters of the accounts and keys it charges. A crash loses at most the rows still buffered:
// one flush interval's worth (or up to USAGE_FLUSH_ROWS).
//
// Rows hold text and numbers that came from callers and vendors; `record` makes them storable
// first, so that no request can make a batch fail. Should a row still be refused, the batch is
// split until that row stands alone, and it is set aside: it never holds up the rows behind it.
import { and, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { isDataError, loggableError } from '../db/errors.js';
import { quotaWindows, type QuotaScope } from '../db/schema.js';
import type { Usage } from '../providers/types.js';
import { advanceSpend, SPEND_METRICS, type SpendDelta, type SpendTracker } from '../quotas/spend.js';
import { windowOf } from '../quotas/windows.js';
import { storableAmount, storableCount } from '../storable.js';
import { storableText } from '../unicode.js';

export interface UsageEntry {
  /** When the call ended, in ms since the epoch. */
  at: number;
  accountId: string;
  apiKeyId: string | null;
  provider: string | null;
  model: string;
  /** `author/slug` for a ladder's calls. */
  ladder: string | null;
  instanceId: string | null;
  usage: Usage;
  costUsd: number;
  /** `ok`, or the error code the call failed with. */
  outcome: string;
}

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
const INSERT_CHUNK = 5000;
// Minute counters are needed for a minute; they are swept this often, once an hour old.
const SWEEP_EVERY_MS = 600_000;

/**
 * One INSERT for many rows, each column sent as one array parameter: twelve parameters
 * whatever the batch size, so building the statement costs next to nothing (a row-per-row
 * query builder spent more time on a batch than the call path of all its requests).
 */
function insertRows(rows: UsageEntry[]): SQL {
  const column = <T>(value: (e: UsageEntry) => T) => sql.param(rows.map(value));
  return sql`
    insert into usage_records (created_at, account_id, api_key_id, provider, model, ladder, instance_id,
      prompt_tokens, completion_tokens, total_tokens, cost_usd, outcome)
    select * from unnest(
      ${column((e) => new Date(e.at).toISOString())}::timestamptz[], ${column((e) => e.accountId)}::uuid[],
      ${column((e) => e.apiKeyId)}::uuid[], ${column((e) => e.provider)}::text[], ${column((e) => e.model)}::text[],
      ${column((e) => e.ladder)}::text[], ${column((e) => e.instanceId)}::uuid[], ${column((e) => e.usage.prompt_tokens)}::integer[],
      ${column((e) => e.usage.completion_tokens)}::integer[], ${column((e) => e.usage.total_tokens)}::integer[],
      ${column((e) => e.costUsd)}::double precision[], ${column((e) => e.outcome)}::text[])`;
}

// Model names are at most 256 characters where a request gives them; a longer one is cut, not refused.
const MAX_TEXT = 256;
const text = (value: string) => storableText(value.length > MAX_TEXT ? value.slice(0, MAX_TEXT) : value);
const optionalText = (value: string | null) => (value === null ? null : text(value));

/** The entry as it can be written whatever a caller or vendor put in it: see src/unicode.ts and src/storable.ts. */
function storableEntry(entry: UsageEntry): UsageEntry {
  const { usage } = entry;
  return {
    at: Number.isFinite(entry.at) ? entry.at : Date.now(),
    accountId: entry.accountId,
    apiKeyId: entry.apiKeyId,
    provider: optionalText(entry.provider),
    model: text(entry.model),
    ladder: optionalText(entry.ladder),
    instanceId: entry.instanceId,
    usage: { prompt_tokens: storableCount(usage.prompt_tokens), completion_tokens: storableCount(usage.completion_tokens), total_tokens: storableCount(usage.total_tokens) },
    costUsd: storableAmount(entry.costUsd),
    outcome: text(entry.outcome),
  };
}

export function createLedger(db: Db, options: LedgerOptions) {
  let buffer: UsageEntry[] = [];
  let flushing: Promise<void> | null = null;
  let lastSweep = 0;
  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref();

  async function writeBatch(batch: UsageEntry[]): Promise<void> {
    const deltas = new Map<string, SpendDelta>();
    const charge = (scope: QuotaScope, id: string, entry: UsageEntry) => {
      if (entry.costUsd <= 0) return;
      for (const metric of SPEND_METRICS) {
        const windowStart = windowOf(metric, entry.at).start;
        const key = `${scope}:${id}:${metric}:${windowStart}`;
        const delta = deltas.get(key) ?? { scope, id, metric, windowStart, amount: 0 };
        delta.amount += entry.costUsd;
        deltas.set(key, delta);
      }
    };
    for (const entry of batch) {
      charge('account', entry.accountId, entry);
      if (entry.apiKeyId) charge('api_key', entry.apiKeyId, entry);
    }
    const totals = await db.transaction(async (tx) => {
      for (let i = 0; i < batch.length; i += INSERT_CHUNK) await tx.execute(insertRows(batch.slice(i, i + INSERT_CHUNK)));
      return advanceSpend(tx as unknown as Db, [...deltas.values()]);
    });
    const touched = new Set<string>();
    for (const total of totals) {
      const flushed = deltas.get(`${total.scope}:${total.id}:${total.metric}:${total.windowStart}`)?.amount ?? 0;
      options.spend.applyFlushed(total, flushed);
      touched.add(options.spend.keyOf(total.scope, total.id, total.metric));
    }
    // The rows are written: a failed refresh of the other views is retried by the next flush.
    await options.spend.refresh(touched).catch((error: unknown) => options.log.warn({ err: loggableError(error) }, 'spend refresh failed; will retry'));
  }

  /**
   * Writes a batch; if the database refuses it for its values, writes each half on its own, down
   * to single rows, and sets aside a row refused alone. Returns what is left to write when the
   * database failed otherwise (it is not there): those rows wait for the next flush.
   */
  async function writeOrSplit(batch: UsageEntry[]): Promise<{ left: UsageEntry[]; error?: unknown }> {
    try {
      await writeBatch(batch);
      return { left: [] };
    } catch (error) {
      if (!isDataError(error)) return { left: batch, error };
      if (batch.length === 1) {
        const row = batch[0]!;
        options.log.error({ err: loggableError(error), account_id: row.accountId, model: row.model, at: new Date(row.at).toISOString() }, 'usage ledger row refused by the database; set aside');
        options.onRejected?.();
        return { left: [] };
      }
      const half = Math.ceil(batch.length / 2);
      const first = await writeOrSplit(batch.slice(0, half));
      if (first.left.length > 0) return { left: first.left.concat(batch.slice(half)), error: first.error };
      return writeOrSplit(batch.slice(half));
    }
  }

  /** Puts rows back at the head of the buffer, for the next flush. */
  function keep(rows: UsageEntry[], error: unknown): void {
    buffer = rows.concat(buffer);
    if (buffer.length > MAX_BUFFERED) {
      const dropped = buffer.length - MAX_BUFFERED;
      buffer = buffer.slice(dropped);
      options.log.error({ dropped }, 'usage ledger buffer full: oldest rows dropped');
    }
    // Never the error itself: drizzle's carries the statement with every row of the batch.
    options.log.warn({ err: loggableError(error), buffered: buffer.length }, 'usage ledger flush failed; will retry');
  }

  async function flushOnce(): Promise<void> {
    const batch = buffer;
    buffer = [];
    if (batch.length > 0) {
      const { left, error } = await writeOrSplit(batch);
      if (left.length > 0) return keep(left, error);
    }
    // Housekeeping after the rows are safe: its failure must not put written rows back.
    try {
      if (batch.length === 0) await options.spend.refresh(new Set());
      const now = options.clock();
      if (now - lastSweep >= SWEEP_EVERY_MS) {
        lastSweep = now;
        await db
          .delete(quotaWindows)
          .where(and(inArray(quotaWindows.metric, ['requests', 'tokens']), lt(quotaWindows.windowStart, new Date(now - 3_600_000))));
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
      options.spend.add('account', entry.accountId, entry.costUsd, entry.at);
      if (entry.apiKeyId) options.spend.add('api_key', entry.apiKeyId, entry.costUsd, entry.at);
      if (buffer.length >= options.flushRows && !flushing) void flush();
    },
    flush,
    /** Rows recorded and not yet written. */
    get buffered(): number {
      return buffer.length;
    },
    async close(): Promise<void> {
      clearInterval(timer);
      await flush();
    },
  };
}

export type Ledger = ReturnType<typeof createLedger>;
