// Queuing deliveries when an instance ends. Each statement that finishes instances (the run's
// journal, the sweep that fails interrupted runs, the cancel of a pending run) queues them in
// the same statement or transaction, so a finished run always has its deliveries, and a
// statement that does not finish the row (a lost fence) queues none.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';

/**
 * A CTE, `webhook_queue`, to add to a statement that finishes instances: `finished` names a CTE
 * returning the finished rows' `id`, `account_id` and `status`. (A CTE sees the table as it was
 * before the statement, so the finished values must come from that CTE, not from `instances`.)
 */
export const webhookEnqueueCte = (finished: string) => `webhook_queue AS (
  INSERT INTO webhook_deliveries (endpoint_id, event_type, instance_id)
  SELECT w.id, 'instance.' || f.status, f.id FROM ${finished} f
  JOIN webhook_endpoints w ON w.account_id = f.account_id AND w.disabled_at IS NULL
    AND w.events @> jsonb_build_array('instance.' || f.status)
  RETURNING 1
)`;

/** The same for one instance, inside the caller's transaction. */
export async function enqueueInstanceEnded(tx: Pick<Db, 'execute'>, instance: { id: string; accountId: string; status: string }): Promise<void> {
  const type = `instance.${instance.status}`;
  await tx.execute(sql`
    INSERT INTO webhook_deliveries (endpoint_id, event_type, instance_id)
    SELECT w.id, ${type}, ${instance.id}::uuid FROM webhook_endpoints w
    WHERE w.account_id = ${instance.accountId}::uuid AND w.disabled_at IS NULL AND w.events @> jsonb_build_array(${type}::text)`);
}
