// Notices between processes about background runs, carried by the database's NOTIFY (the
// embedded database has its own, within the process): a new pending instance wakes idle
// workers, and a cancel request reaches whichever process runs the instance. Both are fast
// paths only; workers also poll, so a lost notice delays work but never loses it.
import type { Database } from '../db/client.js';

export const PENDING_CHANNEL = 'ladder_instance_pending';
export const CANCEL_CHANNEL = 'ladder_instance_cancel';

type Unsubscribe = () => Promise<void>;

export function createRunNotices(database: Pick<Database, 'query' | 'listen'>) {
  return {
    /** Tells every worker that a pending instance is waiting. */
    async pendingCreated(): Promise<void> {
      await database.query('select pg_notify($1, $2)', [PENDING_CHANNEL, '']);
    },
    /** Tells the process running `instanceId` that its owner asked to cancel it. */
    async cancelRequested(instanceId: string): Promise<void> {
      await database.query('select pg_notify($1, $2)', [CANCEL_CHANNEL, instanceId]);
    },
    onPending: (handler: () => void): Promise<Unsubscribe> => database.listen(PENDING_CHANNEL, () => handler()),
    onCancel: (handler: (instanceId: string) => void): Promise<Unsubscribe> => database.listen(CANCEL_CHANNEL, handler),
  };
}

export type RunNotices = ReturnType<typeof createRunNotices>;
