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
// spent more time on a batch than the call path of all its requests). Parsing those arrays as
// text cost the embedded database 2.2 µs per `float8` element and 1.3 µs per `uuid`, so what rows
// repeat goes once (and the arrays now go in binary there, src/db/pglite-binary-arrays.ts; the
// rows' insert and its indexes are most of what is left, docs/performance.md): each distinct account,
// key, provider, model, ladder and outcome together is one entry of `dims`, and a row carries its
// entry's number; its time goes as whole milliseconds after the batch's first row's. The rows
// are written in the order given, which the block-range index on their time counts on (a
// subscript into the entries' arrays kept it without a sort, but reads a text array from its
// start: 5,000 distinct entries took twice as long; docs/performance.md). A batch written before
// (no id claimed) writes nothing and adds nothing, and still reads the counters' totals.
const BATCH_SQL = `
with claimed as (
  insert into usage_batches (id) values ($1) on conflict do nothing returning id
), dims as (
  select * from unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[])
    with ordinality as d(account_id, api_key_id, provider, model, ladder, outcome, n)
), batch as (
  select to_timestamp(($8::float8 + r.after_ms) / 1000) as created_at, d.account_id, d.api_key_id, d.provider, d.model, d.ladder, r.instance_id,
    r.prompt_tokens, r.completion_tokens, r.total_tokens, r.cost_nanos, d.outcome
  from claimed, unnest($9::integer[], $10::bigint[], $11::uuid[], $12::integer[], $13::integer[], $14::integer[], $15::bigint[])
    with ordinality as r(dim, after_ms, instance_id, prompt_tokens, completion_tokens, total_tokens, cost_nanos, ord)
  join dims d on d.n = r.dim
  order by r.ord
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
  from unnest($16::text[], $17::uuid[], $18::text[], $19::float8[], $20::bigint[]) as d(scope, subject_id, metric, window_ms, amount)
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
  const { dims, dim, afterMs, startMs } = columnsOf(rows);
  const result = await database.query<BatchRow>(
    BATCH_SQL,
    [
      batchId,
      dims.accountId,
      dims.apiKeyId,
      dims.provider,
      dims.model,
      dims.ladder,
      dims.outcome,
      startMs,
      dim,
      afterMs,
      rows.map((e) => e.instanceId),
      rows.map((e) => e.usage.prompt_tokens),
      rows.map((e) => e.usage.completion_tokens),
      rows.map((e) => e.usage.total_tokens),
      rows.map((e) => e.costNanos),
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

type Dim = Pick<UsageEntry, 'accountId' | 'apiKeyId' | 'provider' | 'model' | 'ladder' | 'outcome'>;
const sameDim = (a: Dim, b: Dim) =>
  a.accountId === b.accountId && a.apiKeyId === b.apiKeyId && a.provider === b.provider && a.model === b.model && a.ladder === b.ladder && a.outcome === b.outcome;

/**
 * The rows' columns as BATCH_SQL takes them: `dims`, the distinct combinations of what rows
 * repeat, numbered from 1 in order of first use; each row's number (`dim`); its time in whole
 * milliseconds after `startMs`, the first row's (`at` is whole milliseconds: src/usage/ledger.ts).
 */
function columnsOf(rows: UsageEntry[]) {
  const dims = { accountId: [] as string[], apiKeyId: [] as (string | null)[], provider: [] as (string | null)[], model: [] as string[], ladder: [] as (string | null)[], outcome: [] as string[] };
  const numbers = new Map<string, number>();
  const dim = new Array<number>(rows.length);
  const afterMs = new Array<number>(rows.length);
  const startMs = rows[0]?.at ?? 0;
  let last: Dim | null = null;
  let lastNumber = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    // Neighbouring rows often share everything (one caller's traffic): no key is built for them.
    if (last === null || !sameDim(last, row)) {
      // Unambiguous: these texts hold no NUL (src/unicode.ts), and none that may be null can read "null" (a uuid, a provider, `author/slug`).
      const key = `${row.accountId}\u0000${row.apiKeyId}\u0000${row.provider}\u0000${row.model}\u0000${row.ladder}\u0000${row.outcome}`;
      let number = numbers.get(key);
      if (number === undefined) {
        number = numbers.size + 1;
        numbers.set(key, number);
        dims.accountId.push(row.accountId);
        dims.apiKeyId.push(row.apiKeyId);
        dims.provider.push(row.provider);
        dims.model.push(row.model);
        dims.ladder.push(row.ladder);
        dims.outcome.push(row.outcome);
      }
      last = row;
      lastNumber = number;
    }
    dim[i] = lastNumber;
    afterMs[i] = row.at - startMs;
  }
  return { dims, dim, afterMs, startMs };
}

/** Batch ids are needed while a batch may still be retried; a day (by the database's clock) is far beyond that. */
export const forgetOldBatches = (db: Db) => db.delete(usageBatches).where(lt(usageBatches.createdAt, sql`now() - interval '1 day'`));
