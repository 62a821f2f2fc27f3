// Reading an endpoint's deliveries, newest first, each with its attempts. Nothing here changes a row.
import type { Database } from '../db/client.js';
import type { WebhookDeliveryStatus } from '../db/schema.js';

export interface DeliveryRecord {
  id: string;
  endpointId: string;
  eventType: string;
  instanceId: string | null;
  status: WebhookDeliveryStatus;
  nextAttemptAt: Date;
  createdAt: Date;
  finishedAt: Date | null;
  attempts: Array<{ attempt: number; started_at: string; status_code: number | null; latency_ms: number; error: string | null }>;
}

const COLUMNS = `d.id, d.endpoint_id AS "endpointId", d.event_type AS "eventType", d.instance_id AS "instanceId", d.status,
  d.next_attempt_at AS "nextAttemptAt", d.created_at AS "createdAt", d.finished_at AS "finishedAt",
  coalesce((SELECT json_agg(json_build_object('attempt', a.attempt, 'started_at', a.started_at, 'status_code', a.status_code,
    'latency_ms', a.latency_ms, 'error', a.error) ORDER BY a.attempt) FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS attempts`;

const PAGE_SQL = `
SELECT ${COLUMNS} FROM webhook_deliveries d
WHERE d.endpoint_id = $1 AND ($2::uuid IS NULL OR (d.created_at, d.id) < (SELECT c.created_at, c.id FROM webhook_deliveries c WHERE c.id = $2::uuid))
ORDER BY d.created_at DESC, d.id DESC LIMIT $3`;

export function createDeliveryHistory(database: Pick<Database, 'query'>) {
  return {
    /** Whether `id` is a delivery of the endpoint (a cursor must name one). */
    async exists(endpointId: string, id: string): Promise<boolean> {
      const rows = await database.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2', [id, endpointId]);
      return rows.length > 0;
    },

    async page(endpointId: string, limit: number, after: string | null): Promise<{ rows: DeliveryRecord[]; hasMore: boolean }> {
      const rows = await database.query<DeliveryRecord>(PAGE_SQL, [endpointId, after, limit + 1]);
      return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
    },

    async get(id: string): Promise<DeliveryRecord | null> {
      const [row] = await database.query<DeliveryRecord>(`SELECT ${COLUMNS} FROM webhook_deliveries d WHERE d.id = $1`, [id]);
      return row ?? null;
    },
  };
}

export type DeliveryHistory = ReturnType<typeof createDeliveryHistory>;
