// The delivery queue. Senders of any process take due rows with FOR UPDATE SKIP LOCKED and a
// lease (database clock) that outlasts one attempt's timeout, so a holder's request is over
// before anyone else may take the row. Every take bumps `fence`, and an outcome is written
// only under the fence it was taken with: a holder that lost the row writes nothing, and two
// processes never make the same attempt. A row whose holder died is taken again once its
// lease has expired; its unfinished attempt is recorded as such.
import type { Database } from '../db/client.js';
import { DISABLE_AFTER_MS } from './backoff.js';

/** A delivery this process now holds, with its endpoint. */
export interface HeldDelivery {
  id: string;
  fence: number;
  /** This attempt's number, from 1. */
  attempt: number;
  eventType: string;
  instanceId: string | null;
  payload: string | null;
  createdAt: Date;
  endpointId: string;
  accountId: string;
  url: string;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: Date | null;
}

const ENDPOINT_COLUMNS = `w.id AS "endpointId", w.account_id AS "accountId", w.url, w.secret_ciphertext AS "secretCiphertext",
  w.previous_secret_ciphertext AS "previousSecretCiphertext", w.previous_secret_expires_at AS "previousSecretExpiresAt"`;

export const INTERRUPTED_ATTEMPT = 'The process sending this attempt stopped before it finished; its outcome is unknown.';

// Due rows of enabled endpoints, oldest due first (due by the sender's clock, or the database's: new rows
// carry the database's time, and a sender's clock a little behind must not hold them back); `sending` rows whose lease expired were left by a process that stopped.
const CLAIM_SQL = `
WITH next AS (
  SELECT d.id, d.status = 'sending' AS lost, d.attempts AS lost_attempt, d.lease_expires_at AS lost_lease
  FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.disabled_at IS NULL
  WHERE (d.status = 'pending' AND d.next_attempt_at <= greatest($3::timestamptz, now())) OR (d.status = 'sending' AND d.lease_expires_at < now())
  ORDER BY d.next_attempt_at, d.id LIMIT $2 FOR UPDATE OF d SKIP LOCKED
), lost AS (
  INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, error)
  SELECT id, lost_attempt, lost_lease - $4::int * interval '1 millisecond', NULL, 0, $5::text FROM next WHERE lost AND lost_attempt > 0
  ON CONFLICT DO NOTHING
)
UPDATE webhook_deliveries d SET status = 'sending', attempts = d.attempts + 1, fence = d.fence + 1, claimed_by = $1,
  lease_expires_at = now() + $4::int * interval '1 millisecond'
FROM next, webhook_endpoints w WHERE d.id = next.id AND w.id = d.endpoint_id
RETURNING d.id, d.fence, d.attempts AS attempt, d.event_type AS "eventType", d.instance_id AS "instanceId", d.payload,
  d.created_at AS "createdAt", ${ENDPOINT_COLUMNS}`;

// A delivery the caller sends at once (POST /v1/webhooks/{id}/test): created already held.
const INSERT_HELD_SQL = `
WITH d AS (
  INSERT INTO webhook_deliveries (endpoint_id, event_type, payload, status, attempts, fence, claimed_by, lease_expires_at)
  SELECT w.id, $2, $3, 'sending', 1, 1, $4, now() + $5::int * interval '1 millisecond' FROM webhook_endpoints w WHERE w.id = $1
  RETURNING *
)
SELECT d.id, d.fence, d.attempts AS attempt, d.event_type AS "eventType", d.instance_id AS "instanceId", d.payload,
  d.created_at AS "createdAt", ${ENDPOINT_COLUMNS}
FROM d JOIN webhook_endpoints w ON w.id = d.endpoint_id`;

const SET_PAYLOAD_SQL = `
UPDATE webhook_deliveries SET payload = coalesce(payload, $3) WHERE id = $1 AND fence = $2 AND status = 'sending' RETURNING payload`;

// The attempt, the delivery's next state and the endpoint's failure streak, in one statement
// under the fence. A failure that ends a streak of DISABLE_AFTER_MS disables the endpoint.
const RECORD_SQL = `
WITH held AS (
  UPDATE webhook_deliveries SET status = $3, next_attempt_at = coalesce($4::timestamptz, next_attempt_at),
    finished_at = CASE WHEN $3 IN ('delivered', 'failed') THEN $5::timestamptz END, claimed_by = NULL, lease_expires_at = NULL
  WHERE id = $1 AND fence = $2 AND status = 'sending'
  RETURNING id, endpoint_id, attempts
), attempt AS (
  INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, error)
  SELECT id, attempts, $6::timestamptz, $7::int, $8::int, $9::text FROM held
  ON CONFLICT DO NOTHING
), streak AS (
  SELECT w.id, CASE WHEN $10::bool THEN NULL ELSE coalesce(w.failing_since, $5::timestamptz) END AS since
  FROM webhook_endpoints w JOIN held ON w.id = held.endpoint_id
), endpoint AS (
  UPDATE webhook_endpoints w SET failing_since = s.since,
    disabled_at = CASE WHEN w.disabled_at IS NULL AND s.since <= $5::timestamptz - $11::bigint * interval '1 millisecond' THEN $5::timestamptz ELSE w.disabled_at END,
    disabled_reason = CASE WHEN w.disabled_at IS NULL AND s.since <= $5::timestamptz - $11::bigint * interval '1 millisecond' THEN $12::text ELSE w.disabled_reason END
  FROM streak s WHERE w.id = s.id
  RETURNING w.disabled_at = $5::timestamptz AS disabled_now
)
SELECT (SELECT count(*)::int FROM held) AS held, coalesce((SELECT bool_or(disabled_now) FROM endpoint), false) AS disabled`;

export interface AttemptOutcome {
  startedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

/** What follows the attempt: delivered, another attempt at `retryAt`, or given up. */
export type NextStep = { status: 'delivered' } | { status: 'pending'; retryAt: Date } | { status: 'failed' };

export const disabledReason = (days: number) =>
  `Disabled after ${days} days in which every delivery attempt failed; fix the receiver, then PATCH the endpoint with "enabled": true.`;

export function createDeliveryQueue(database: Pick<Database, 'query'>, options: { holder: string; leaseMs: number }) {
  return {
    /** Takes up to `limit` deliveries due by `now` (the sender's clock), each as a new attempt. */
    claim(limit: number, now: Date): Promise<HeldDelivery[]> {
      if (limit <= 0) return Promise.resolve([]);
      return database.query<HeldDelivery>(CLAIM_SQL, [options.holder, limit, now.toISOString(), options.leaseMs, INTERRUPTED_ATTEMPT]);
    },

    /** Queues a message for one endpoint, held by this process for its first attempt; null when the endpoint is gone. */
    async insertHeld(endpointId: string, eventType: string, payload: string): Promise<HeldDelivery | null> {
      const [row] = await database.query<HeldDelivery>(INSERT_HELD_SQL, [endpointId, eventType, payload, options.holder, options.leaseMs]);
      return row ?? null;
    },

    /** Fixes the payload at the first attempt that renders it; answers the stored one, or null when the row is no longer ours. */
    async fixPayload(held: HeldDelivery, payload: string): Promise<string | null> {
      const [row] = await database.query<{ payload: string }>(SET_PAYLOAD_SQL, [held.id, held.fence, payload]);
      return row?.payload ?? null;
    },

    /** Records the attempt and what follows; `held: false` when the row was no longer ours (nothing written). */
    async record(held: HeldDelivery, outcome: AttemptOutcome, next: NextStep, now: Date): Promise<{ held: boolean; disabled: boolean }> {
      const [row] = await database.query<{ held: number; disabled: boolean }>(RECORD_SQL, [
        held.id,
        held.fence,
        next.status,
        next.status === 'pending' ? next.retryAt.toISOString() : null,
        now.toISOString(),
        outcome.startedAt.toISOString(),
        outcome.statusCode,
        Math.round(outcome.latencyMs),
        outcome.error,
        next.status === 'delivered',
        DISABLE_AFTER_MS,
        disabledReason(DISABLE_AFTER_MS / 86_400_000),
      ]);
      return { held: (row?.held ?? 0) > 0, disabled: row?.disabled ?? false };
    },
  };
}

export type DeliveryQueue = ReturnType<typeof createDeliveryQueue>;
