// Taking instances: pending ones oldest first, abandoned ones (lease expired) when their owner
// died, and the synchronous kind, created already held by the request's process. Every take
// bumps the fence, so whoever held the row before can no longer write for it.
import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { instances } from '../db/schema.js';
import { EVENTS_NOTICE_CTE } from '../services/instance-events.js';
import { webhookEnqueueCte } from '../webhooks/enqueue.js';
import type { InstanceRow, NewInstance } from '../services/instances.js';
import { interruptedMessages, RUN_INTERRUPTED } from './errors.js';

/** A row this process now holds, with what running it needs. */
export interface ClaimedInstance {
  id: string;
  fence: number;
  attempts: number;
  ladderId: string | null;
  ladderVersion: number;
  author: string;
  slug: string;
  accountId: string;
  /** The key that started the run, and its account's name: whose limits and ledger it counts against. */
  apiKeyId: string | null;
  username: string;
  model: string;
  input: string;
  knobs: Record<string, number>;
  cancelRequested: boolean;
  /** Started before (released or abandoned): it may have checkpoints and events. */
  resumed: boolean;
  /** A rerun's source instance, whose calls it may reuse (src/worker/reuse.ts). */
  rerunOf: string | null;
  /** The queuing request's W3C traceparent, for the run's span to link to. */
  traceParent: string | null;
}

const RETURNING = `
RETURNING i.id, i.fence, i.attempts, i.ladder_id AS "ladderId", i.ladder_version AS "ladderVersion", i.author, i.slug,
  i.account_id AS "accountId", i.api_key_id AS "apiKeyId",
  (SELECT username FROM accounts a WHERE a.id = i.account_id) AS username, i.model, i.input, i.knobs, i.cancel_requested_at IS NOT NULL AS "cancelRequested",
  next.was_started AS resumed, i.rerun_of AS "rerunOf", i.trace_parent AS "traceParent"`;

const TAKE = `
UPDATE instances i SET status = 'running', started_at = coalesce(i.started_at, now()), attempts = i.attempts + 1,
  fence = i.fence + 1, claimed_by = $1, lease_expires_at = now() + $2::int * interval '1 millisecond'
FROM next WHERE i.id = next.id`;

const CLAIM_PENDING_SQL = `
WITH next AS (
  SELECT id, started_at IS NOT NULL AS was_started FROM instances
  WHERE status = 'pending' ORDER BY created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED
)${TAKE}${RETURNING}`;

// A lease that was never set (a row from before leases) counts as expired.
const EXPIRED = `status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at < now())`;

const CLAIM_EXPIRED_SQL = `
WITH next AS (
  SELECT id, true AS was_started FROM instances
  WHERE ${EXPIRED} AND mode = 'async' AND attempts < $4 AND id <> ALL($5::uuid[])
  ORDER BY lease_expires_at NULLS FIRST, id LIMIT $3 FOR UPDATE SKIP LOCKED
)${TAKE}${RETURNING}`;

// Synchronous runs whose process died (nobody is left to answer), and background runs whose
// processes died too often: failed, with what their checkpoints say they used, and a final
// event. SKIP LOCKED passes over a row a late writer still holds; the next sweep gets it.
const FINISH_INTERRUPTED_SQL = `
WITH doomed AS (
  SELECT id FROM instances WHERE ${EXPIRED} AND (mode = 'sync' OR attempts >= $1) AND id <> ALL($4::uuid[]) LIMIT 100 FOR UPDATE SKIP LOCKED
), used AS (
  SELECT d.id, count(k.call_key)::int AS calls, coalesce(sum(k.cost_nanos), 0) AS spend,
    jsonb_build_object(
      'prompt_tokens', coalesce(sum((k.usage->>'prompt_tokens')::bigint), 0),
      'completion_tokens', coalesce(sum((k.usage->>'completion_tokens')::bigint), 0),
      'total_tokens', coalesce(sum((k.usage->>'total_tokens')::bigint), 0)) AS usage
  FROM doomed d LEFT JOIN instance_calls k ON k.instance_id = d.id GROUP BY d.id
), failed AS (
  UPDATE instances i SET status = 'failed', fence = i.fence + 1, finished_at = now(), claimed_by = NULL, lease_expires_at = NULL,
    error = jsonb_build_object('status', 503, 'type', 'api_error', 'code', '${RUN_INTERRUPTED}', 'message',
      CASE WHEN i.mode = 'sync' THEN $2::text ELSE replace($3::text, '{n}', i.attempts::text) END),
    model_calls = u.calls, spend_nanos = u.spend, usage = u.usage
  FROM used u WHERE i.id = u.id
  RETURNING i.id, i.error, i.model_calls, i.spend_nanos, i.usage, i.account_id, i.status
), events AS (
  INSERT INTO instance_events (instance_id, seq, type, data)
  SELECT f.id, coalesce((SELECT max(seq) FROM instance_events e WHERE e.instance_id = f.id), 0) + 1, 'instance.failed',
    jsonb_build_object('model_calls', f.model_calls, 'usage', f.usage, 'spend_usd', trim_scale(f.spend_nanos::numeric / 1000000000), 'error', f.error)
  FROM failed f
  RETURNING instance_id
), ${webhookEnqueueCte('failed') /* webhooks: queued with the failure (docs/webhooks.md) */}, ${EVENTS_NOTICE_CTE}
SELECT id, (SELECT count(*)::int FROM notice) AS notified FROM failed`;

export interface ClaimOptions {
  /** Who holds the lease: this process. */
  holder: string;
  leaseMs: number;
}

export async function claimPending(database: Pick<Database, 'query'>, options: ClaimOptions, limit: number): Promise<ClaimedInstance[]> {
  if (limit <= 0) return [];
  return database.query<ClaimedInstance>(CLAIM_PENDING_SQL, [options.holder, options.leaseMs, limit], 'ladder_claim_pending');
}

/**
 * Background runs whose process stopped, taken over to resume from their checkpoints. `held`:
 * the runs this process still runs itself, whose lease may only look expired (renewed late).
 */
export async function claimExpired(database: Pick<Database, 'query'>, options: ClaimOptions & { maxAttempts: number }, limit: number, held: string[]): Promise<ClaimedInstance[]> {
  if (limit <= 0) return [];
  return database.query<ClaimedInstance>(CLAIM_EXPIRED_SQL, [options.holder, options.leaseMs, limit, options.maxAttempts, held], 'ladder_claim_expired');
}

/** Fails (run_interrupted) the abandoned runs nobody may resume, but for those this process still runs (`held`); returns their ids. */
export async function finishInterrupted(database: Pick<Database, 'query'>, maxAttempts: number, held: string[]): Promise<string[]> {
  const rows = await database.query<{ id: string }>(FINISH_INTERRUPTED_SQL, [
    maxAttempts,
    interruptedMessages.sync,
    interruptedMessages.async('{n}'),
    held,
  ], 'ladder_finish_interrupted');
  return rows.map((r) => r.id);
}

/**
 * Inserts a synchronous run's row: running at once, held by the request's process (fence 1).
 * Built once (drizzle builds a statement's text anew for each call otherwise, a few dozen µs of
 * the main thread for this row's 30 columns), executed for each run.
 */
export function preparedInsertRunning(database: Pick<Database, 'db'>, options: ClaimOptions): (input: NewInstance, stepsTotal: number) => Promise<InstanceRow> {
  const value = (name: string) => sql.placeholder(name);
  const statement = database.db
    .insert(instances)
    .values({
      ladderId: value('ladderId'),
      ladderVersion: value('ladderVersion'),
      author: value('author'),
      slug: value('slug'),
      accountId: value('accountId'),
      apiKeyId: value('apiKeyId'),
      mode: value('mode'),
      model: value('model'),
      input: value('input'),
      knobs: value('knobs'),
      rerunOf: value('rerunOf'),
      traceParent: value('traceParent'),
      status: 'running',
      startedAt: sql`now()`,
      attempts: 1,
      fence: 1,
      claimedBy: options.holder,
      leaseExpiresAt: sql`now() + ${options.leaseMs}::int * interval '1 millisecond'`,
      stepsTotal: value('stepsTotal'),
    })
    .returning()
    .prepare('ladder_insert_running');
  return async (input, stepsTotal) => {
    const [row] = await statement.execute({
      ...input,
      rerunOf: input.rerunOf ?? null,
      traceParent: input.traceParent ?? null,
      stepsTotal,
    });
    return row!;
  };
}

