// The usage ledger: every model call (direct, or one of a ladder run's) is recorded here and
// written in batches off the request path, every USAGE_FLUSH_MS or once USAGE_FLUSH_ROWS rows
// wait, whichever comes first, and at shutdown. Each batch also advances the shared spend
// counters of the accounts and keys it charges. A crash loses at most the rows still buffered:
// one flush interval's worth (or up to USAGE_FLUSH_ROWS).
import { and, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { quotaWindows, type QuotaScope } from '../db/schema.js';
import type { Usage } from '../providers/types.js';
import { advanceSpend, SPEND_METRICS, type SpendDelta, type SpendTracker } from '../quotas/spend.js';
import { windowOf } from '../quotas/windows.js';

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
    await options.spend.refresh(touched);
  }

  async function flushOnce(): Promise<void> {
    const batch = buffer;
    buffer = [];
    try {
      if (batch.length > 0) await writeBatch(batch);
      else await options.spend.refresh(new Set());
      const now = options.clock();
      if (now - lastSweep >= SWEEP_EVERY_MS) {
        lastSweep = now;
        await db
          .delete(quotaWindows)
          .where(and(inArray(quotaWindows.metric, ['requests', 'tokens']), lt(quotaWindows.windowStart, new Date(now - 3_600_000))));
      }
    } catch (error) {
      // Keep the rows for the next attempt; the database may be back by then.
      buffer = batch.concat(buffer);
      if (buffer.length > MAX_BUFFERED) {
        const dropped = buffer.length - MAX_BUFFERED;
        buffer = buffer.slice(dropped);
        options.log.error({ dropped }, 'usage ledger buffer full: oldest rows dropped');
      }
      options.log.warn({ err: error, buffered: buffer.length }, 'usage ledger flush failed; will retry');
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
    record(entry: UsageEntry): void {
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
