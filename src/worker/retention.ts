// Retention: finished instances older than the retention period go, their checkpoints and
// events with them (ON DELETE CASCADE); idempotency keys are let go once their 24-hour window
// has passed; raw usage rows older than theirs go (the hourly totals reports read stay), and
// stored responses older than theirs. Deletes run in bounded batches that skip rows another process is deleting, so
// every worker process may run the job at once without waiting on the others.
import type { Database } from '../db/client.js';

/** How long an Idempotency-Key answers with the instance it first created. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
const BATCH = 500;
// One job does a bounded amount of work; the next one goes on.
const MAX_BATCHES = 20;

const DELETE_SQL = `
DELETE FROM instances WHERE id IN (
  SELECT id FROM instances
  WHERE status IN ('completed', 'failed', 'cancelled') AND finished_at < $1::timestamptz
  ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED
)`;

const FORGET_KEYS_SQL = `
UPDATE instances SET idempotency_key = NULL WHERE id IN (
  SELECT id FROM instances WHERE idempotency_key IS NOT NULL AND created_at < $1::timestamptz
  LIMIT $2 FOR UPDATE SKIP LOCKED
)
RETURNING id`;

// Through the block-range index on created_at; each batch is a short transaction, so the
// ledger's inserts and the reports never wait on it.
const DELETE_USAGE_SQL = `
DELETE FROM usage_records WHERE id IN (
  SELECT id FROM usage_records WHERE created_at < $1::timestamptz LIMIT $2
)`;
const USAGE_BATCH = 5000;

// Stored responses (docs/responses.md), through their block-range index on created_at.
const DELETE_RESPONSES_SQL = `
DELETE FROM responses WHERE id IN (
  SELECT id FROM responses WHERE created_at < $1::timestamptz LIMIT $2 FOR UPDATE SKIP LOCKED
)`;

export interface RetentionResult {
  deleted: number;
  keysCleared: number;
  usageRowsDeleted: number;
  responsesDeleted: number;
}

export interface RetentionPeriods {
  /** Finished instances; 0 keeps them forever. */
  instanceDays: number;
  /** Raw usage rows; 0 keeps them forever. */
  usageRawDays: number;
  /** Stored responses; 0 keeps them forever. Absent: 0. */
  responsesDays?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Deletes in batches until fewer than a batch remain or the job's share of work is done. */
async function deleteInBatches(database: Pick<Database, 'query'>, statement: string, cutoff: Date, batch: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const [row] = await database.query<{ n: number }>(`WITH gone AS (${statement} RETURNING 1) SELECT count(*)::int AS n FROM gone`, [cutoff.toISOString(), batch]);
    const n = row?.n ?? 0;
    total += n;
    if (n < batch) break;
  }
  return total;
}

/** One retention job as of `now`. */
export async function runRetention(database: Pick<Database, 'query'>, periods: RetentionPeriods, now: Date = new Date()): Promise<RetentionResult> {
  const result = { deleted: 0, keysCleared: 0, usageRowsDeleted: 0, responsesDeleted: 0 };
  const keyCutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = (await database.query<{ id: string }>(FORGET_KEYS_SQL, [keyCutoff, BATCH])).length;
    result.keysCleared += n;
    if (n < BATCH) break;
  }
  if (periods.instanceDays > 0) result.deleted = await deleteInBatches(database, DELETE_SQL, new Date(now.getTime() - periods.instanceDays * DAY_MS), BATCH);
  if (periods.usageRawDays > 0) result.usageRowsDeleted = await deleteInBatches(database, DELETE_USAGE_SQL, new Date(now.getTime() - periods.usageRawDays * DAY_MS), USAGE_BATCH);
  const responsesDays = periods.responsesDays ?? 0;
  if (responsesDays > 0) result.responsesDeleted = await deleteInBatches(database, DELETE_RESPONSES_SQL, new Date(now.getTime() - responsesDays * DAY_MS), BATCH);
  return result;
}
