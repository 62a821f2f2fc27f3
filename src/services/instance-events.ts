// Reading a run's events (the `instance_events` rows the runners write) for the live stream,
// and waking streams early when a writer announces new rows on EVENTS_CHANNEL.
import { and, asc, eq, gt } from 'drizzle-orm';
import type { Database, Db } from '../db/client.js';
import { instanceEvents } from '../db/schema.js';

export type InstanceEvent = typeof instanceEvents.$inferSelect;

/**
 * Writers `pg_notify('ladder_instance_events', <instance id>)` with their events, so that streams
 * read them at once; streams also poll, so a notice that is lost only delays them.
 */
export const EVENTS_CHANNEL = 'ladder_instance_events';

/**
 * For a statement that inserts events in a CTE `events` (`RETURNING instance_id`): announces them
 * on commit, once per instance, whatever the batch's size. The statement must read `notice`
 * (say `(SELECT count(*) FROM notice)`): PostgreSQL skips a plain SELECT in a CTE nobody reads.
 */
export const EVENTS_NOTICE_CTE = `notice AS (
  SELECT pg_notify('${EVENTS_CHANNEL}', batch.instance_id::text) FROM (SELECT DISTINCT instance_id FROM events) batch
)`;

export const TERMINAL_EVENT_TYPES = new Set(['instance.completed', 'instance.failed', 'instance.cancelled']);

export function createInstanceEventReader(db: Db) {
  return {
    /** The instance's events with a seq above `seq`, in seq order, at most `limit`. */
    async after(instanceId: string, seq: number, limit: number): Promise<InstanceEvent[]> {
      return db
        .select()
        .from(instanceEvents)
        .where(and(eq(instanceEvents.instanceId, instanceId), gt(instanceEvents.seq, seq)))
        .orderBy(asc(instanceEvents.seq))
        .limit(limit);
    },
  };
}

export type InstanceEventReader = ReturnType<typeof createInstanceEventReader>;

type Wake = () => void;

/**
 * One LISTEN per process, shared by every stream (a PostgreSQL LISTEN holds a connection of its
 * own). Subscribes on the first watch; if LISTEN fails the streams simply keep polling.
 */
export function createEventWakeups(database: Pick<Database, 'listen'>, onError: (error: unknown) => void) {
  const waiters = new Map<string, Set<Wake>>();
  let subscription: Promise<(() => Promise<void>) | null> | null = null;
  let closed = false;

  const subscribe = () => {
    subscription ??= database
      .listen(EVENTS_CHANNEL, (instanceId) => waiters.get(instanceId)?.forEach((wake) => wake()))
      .catch((error: unknown) => {
        onError(error);
        subscription = null;
        return null;
      });
  };

  return {
    /** Calls `wake` whenever a writer announces events of `instanceId`; returns the unwatch. */
    watch(instanceId: string, wake: Wake): () => void {
      if (!closed) subscribe();
      const set = waiters.get(instanceId) ?? new Set<Wake>();
      set.add(wake);
      waiters.set(instanceId, set);
      return () => {
        set.delete(wake);
        if (set.size === 0 && waiters.get(instanceId) === set) waiters.delete(instanceId);
      };
    },
    /** Resolves once the LISTEN is in place, or has failed (streams then only poll). */
    async listening(): Promise<void> {
      await subscription;
    },
    async close(): Promise<void> {
      closed = true;
      const unsubscribe = await subscription;
      await unsubscribe?.();
    },
  };
}

export type EventWakeups = ReturnType<typeof createEventWakeups>;
