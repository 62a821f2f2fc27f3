// Pending and running instances across every process sharing the database, for the
// `ladder_instances` gauge. Read at scrape time (and cached by the recorder), never per request.
import { count, inArray } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { instances } from '../db/schema.js';
import type { InstanceCounts } from './recorder.js';

export async function countActiveInstances(db: Db): Promise<InstanceCounts> {
  const rows = await db
    .select({ status: instances.status, n: count() })
    .from(instances)
    .where(inArray(instances.status, ['pending', 'running']))
    .groupBy(instances.status);
  const counts: InstanceCounts = { pending: 0, running: 0 };
  for (const row of rows) if (row.status === 'pending' || row.status === 'running') counts[row.status] = Number(row.n);
  return counts;
}
