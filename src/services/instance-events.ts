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

/** One waiter's view of an instance's notices (EventWakeups.watch). */
export interface NoticeWatch {
  /**
   * Waits at most `ms`: until a notice of the instance, `signal` aborts, or `until` settles. A
   * notice that came since the last wait ended (the caller was reading, nobody was waiting) ends
   * the next one at once: that read may have begun before the writer's commit and missed what
   * the notice announced, and the next notice may never come.
   */
  wait(ms: number, signal: AbortSignal, until?: Promise<void>): Promise<void>;
  /** No more notices: call it when the waiting is over, however it ends. */
  stop(): void;
}

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
    /** Starts taking the notices of `instanceId`, for `wait`s between reads of what they announce. */
    watch(instanceId: string): NoticeWatch {
      if (!closed) subscribe();
      let noticed = false;
      let wake: Wake | null = null;
      const onNotice = () => {
        noticed = true;
        wake?.();
      };
      const set = waiters.get(instanceId) ?? new Set<Wake>();
      set.add(onNotice);
      waiters.set(instanceId, set);
      return {
        wait: (ms, signal, until) =>
          new Promise<void>((resolve) => {
            if (noticed || signal.aborted) {
              noticed = false;
              return resolve();
            }
            const done = () => {
              if (wake !== done) return;
              wake = null;
              noticed = false;
              clearTimeout(timer);
              signal.removeEventListener('abort', done);
              resolve();
            };
            const timer = setTimeout(done, ms);
            wake = done;
            signal.addEventListener('abort', done, { once: true });
            void until?.then(done, done);
          }),
        stop: () => {
          set.delete(onNotice);
          if (set.size === 0 && waiters.get(instanceId) === set) waiters.delete(instanceId);
        },
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
