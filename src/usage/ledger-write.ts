// The statements that write one ledger batch: the raw rows and their hourly totals in one
// statement, marked by the batch's id so that a batch retried after a lost acknowledgement is
// not counted twice (see usage_batches in src/db/schema.ts).
import { lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { usageBatches } from '../db/schema.js';
import type { UsageEntry } from './entry.js';

const INSERT_CHUNK = 5000;

/**
 * One statement for many rows, each column sent as one array parameter: twelve parameters
 * whatever the batch size, so building it costs next to nothing (a row-per-row query builder
 * spent more time on a batch than the call path of all its requests). The same rows are then
 * summed by UTC hour and group into usage_hourly.
 */
function insertRows(rows: UsageEntry[]): SQL {
  const column = <T>(value: (e: UsageEntry) => T) => sql.param(rows.map(value));
  return sql`
    with batch as (
      select * from unnest(
        ${column((e) => new Date(e.at).toISOString())}::timestamptz[], ${column((e) => e.accountId)}::uuid[],
        ${column((e) => e.apiKeyId)}::uuid[], ${column((e) => e.provider)}::text[], ${column((e) => e.model)}::text[],
        ${column((e) => e.ladder)}::text[], ${column((e) => e.instanceId)}::uuid[], ${column((e) => e.usage.prompt_tokens)}::integer[],
        ${column((e) => e.usage.completion_tokens)}::integer[], ${column((e) => e.usage.total_tokens)}::integer[],
        ${column((e) => e.costNanos)}::bigint[], ${column((e) => e.outcome)}::text[])
      as r(created_at, account_id, api_key_id, provider, model, ladder, instance_id, prompt_tokens, completion_tokens, total_tokens, cost_nanos, outcome)
    ), raw as (
      insert into usage_records (created_at, account_id, api_key_id, provider, model, ladder, instance_id,
        prompt_tokens, completion_tokens, total_tokens, cost_nanos, outcome)
      select * from batch
    )
    insert into usage_hourly (account_id, hour, api_key_id, provider, model, ladder, requests, prompt_tokens, completion_tokens, total_tokens, cost_nanos)
    select account_id, date_trunc('hour', created_at, 'UTC'), api_key_id, provider, model, ladder,
      count(*), sum(prompt_tokens), sum(completion_tokens), sum(total_tokens), sum(cost_nanos)
    from batch group by 1, 2, 3, 4, 5, 6
    on conflict on constraint usage_hourly_group_key do update set
      requests = usage_hourly.requests + excluded.requests,
      prompt_tokens = usage_hourly.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = usage_hourly.completion_tokens + excluded.completion_tokens,
      total_tokens = usage_hourly.total_tokens + excluded.total_tokens,
      cost_nanos = usage_hourly.cost_nanos + excluded.cost_nanos`;
}

/**
 * Inside the batch's transaction: claims its id, then writes its rows and totals. Returns
 * false, writing nothing, when a batch of this id was written before.
 */
export async function writeRows(tx: Db, batchId: string, rows: UsageEntry[]): Promise<boolean> {
  const claimed = await tx.insert(usageBatches).values({ id: batchId }).onConflictDoNothing().returning({ id: usageBatches.id });
  if (claimed.length === 0) return false;
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) await tx.execute(insertRows(rows.slice(i, i + INSERT_CHUNK)));
  return true;
}

/** Batch ids are needed while a batch may still be retried; a day (by the database's clock) is far beyond that. */
export const forgetOldBatches = (db: Db) => db.delete(usageBatches).where(lt(usageBatches.createdAt, sql`now() - interval '1 day'`));
