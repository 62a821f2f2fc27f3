// The statement that writes one ledger batch: its id (usage_batches, so that a batch retried
// after a lost acknowledgement is not counted twice), its raw rows, their hourly totals and
// what it adds to the spend counters, all in one statement, so all or nothing without a
// transaction around it. One statement where a transaction took five round trips: on the
// embedded database each round trip is a hand-over to the database's thread and back, and the
// flushes were most of the direct path's slowest requests (docs/performance.md).
import { lt, sql } from 'drizzle-orm';
import type { Database, Db } from '../db/client.js';
import { usageBatches } from '../db/schema.js';
import type { SpendDelta, SpendMetric } from '../quotas/spend.js';
import type { UsageEntry } from './entry.js';

/** Rows a batch holds at most: a flush with more writes several batches, each its own statement. */
export const MAX_BATCH_ROWS = 5000;

// Each column is one array parameter, whatever the batch's size (a row-per-row query builder
// spent more time on a batch than the call path of all its requests). Times go as epoch
// milliseconds: PostgreSQL reads numbers faster than timestamps' text. A batch written before
// (no id claimed) writes nothing and adds nothing, and still reads the counters' totals.
const BATCH_SQL = `
with claimed as (
  insert into usage_batches (id) values ($1) on conflict do nothing returning id
), batch as (
  select to_timestamp(r.at_ms / 1000) as created_at, r.account_id, r.api_key_id, r.provider, r.model, r.ladder, r.instance_id,
    r.prompt_tokens, r.completion_tokens, r.total_tokens, r.cost_nanos, r.outcome
  from claimed, unnest($2::float8[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::uuid[], $9::integer[],
    $10::integer[], $11::integer[], $12::bigint[], $13::text[])
    as r(at_ms, account_id, api_key_id, provider, model, ladder, instance_id, prompt_tokens, completion_tokens, total_tokens, cost_nanos, outcome)
), raw as (
  insert into usage_records (created_at, account_id, api_key_id, provider, model, ladder, instance_id,
    prompt_tokens, completion_tokens, total_tokens, cost_nanos, outcome)
  select * from batch
), hourly as (
  insert into usage_hourly (account_id, hour, api_key_id, provider, model, ladder, requests, prompt_tokens, completion_tokens, total_tokens, cost_nanos)
  select account_id, date_trunc('hour', created_at, 'UTC'), api_key_id, provider, model, ladder,
    count(*), sum(prompt_tokens), sum(completion_tokens), sum(total_tokens), sum(cost_nanos)
  from batch group by 1, 2, 3, 4, 5, 6
  on conflict on constraint usage_hourly_group_key do update set
    requests = usage_hourly.requests + excluded.requests,
    prompt_tokens = usage_hourly.prompt_tokens + excluded.prompt_tokens,
    completion_tokens = usage_hourly.completion_tokens + excluded.completion_tokens,
    total_tokens = usage_hourly.total_tokens + excluded.total_tokens,
    cost_nanos = usage_hourly.cost_nanos + excluded.cost_nanos
), spend as (
  insert into quota_windows (scope, subject_id, metric, window_start, amount)
  select d.scope, d.subject_id, d.metric, to_timestamp(d.window_ms / 1000), case when exists (select from claimed) then d.amount else 0 end
  from unnest($14::text[], $15::uuid[], $16::text[], $17::float8[], $18::bigint[]) as d(scope, subject_id, metric, window_ms, amount)
  on conflict (scope, subject_id, metric, window_start) do update set amount = quota_windows.amount + excluded.amount
  returning scope, subject_id, metric, window_start, amount
)
select c.fresh, s.scope, s.subject_id, s.metric, s.window_start, s.amount
from (select count(*)::int as fresh from claimed) c left join spend s on true`;

interface BatchRow {
  fresh: number;
  scope: SpendDelta['scope'] | null;
  subject_id: string | null;
  metric: SpendMetric | null;
  window_start: Date | string | null;
  amount: number | string | null;
}

export interface BatchWritten {
  /** False when a batch of this id was written before: this one wrote nothing. */
  fresh: boolean;
  /** Each counter the batch adds to, with the total the database holds after it. */
  totals: SpendDelta[];
}

/**
 * Writes the batch `rows` under `batchId`, adding `deltas` (one per counter) to the spend
 * counters, unless a batch of this id was written before.
 */
export async function storeBatch(database: Pick<Database, 'query'>, batchId: string, rows: UsageEntry[], deltas: SpendDelta[]): Promise<BatchWritten> {
  const column = <T>(value: (e: UsageEntry) => T) => rows.map(value);
  const result = await database.query<BatchRow>(
    BATCH_SQL,
    [
      batchId,
      column((e) => e.at),
      column((e) => e.accountId),
      column((e) => e.apiKeyId),
      column((e) => e.provider),
      column((e) => e.model),
      column((e) => e.ladder),
      column((e) => e.instanceId),
      column((e) => e.usage.prompt_tokens),
      column((e) => e.usage.completion_tokens),
      column((e) => e.usage.total_tokens),
      column((e) => e.costNanos),
      column((e) => e.outcome),
      deltas.map((d) => d.scope),
      deltas.map((d) => d.id),
      deltas.map((d) => d.metric),
      deltas.map((d) => d.windowStart),
      deltas.map((d) => d.amount),
    ],
    'usage_ledger_batch',
  );
  const totals: SpendDelta[] = [];
  for (const row of result) {
    if (row.scope === null) continue;
    totals.push({ scope: row.scope, id: row.subject_id!, metric: row.metric!, windowStart: new Date(row.window_start!).getTime(), amount: Number(row.amount) });
  }
  return { fresh: result[0]!.fresh === 1, totals };
}

/** Batch ids are needed while a batch may still be retried; a day (by the database's clock) is far beyond that. */
export const forgetOldBatches = (db: Db) => db.delete(usageBatches).where(lt(usageBatches.createdAt, sql`now() - interval '1 day'`));
