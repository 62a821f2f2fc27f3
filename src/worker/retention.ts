// Retention: finished instances older than the retention period go, their checkpoints and
// events with them (ON DELETE CASCADE); idempotency keys are let go once their 24-hour window
// has passed. Deletes run in bounded batches that skip rows another process is deleting, so
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

export interface RetentionResult {
  deleted: number;
  keysCleared: number;
}

/** One retention job as of `now`; `retentionDays` 0 keeps finished instances forever. */
export async function runRetention(database: Pick<Database, 'query'>, retentionDays: number, now: Date = new Date()): Promise<RetentionResult> {
  const result = { deleted: 0, keysCleared: 0 };
  const keyCutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = (await database.query<{ id: string }>(FORGET_KEYS_SQL, [keyCutoff, BATCH])).length;
    result.keysCleared += n;
    if (n < BATCH) break;
  }
  if (retentionDays <= 0) return result;
  const cutoff = new Date(now.getTime() - retentionDays * 24 * 60 * 60 * 1000).toISOString();
  for (let i = 0; i < MAX_BATCHES; i++) {
    const [row] = await database.query<{ n: number }>(`WITH gone AS (${DELETE_SQL} RETURNING 1) SELECT count(*)::int AS n FROM gone`, [cutoff, BATCH]);
    const n = row?.n ?? 0;
    result.deleted += n;
    if (n < BATCH) break;
  }
  return result;
}
