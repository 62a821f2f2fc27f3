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

/**
 * EVENTS_NOTICE_CTE for a run's events on the way (not its end), announced only while a live
 * stream watches the run: the statement's CTE `held` updates the run's row and returns its
 * `id` and `watchers`. No announcement is lost to a stream opening meanwhile: its count update
 * (WATCH_SQL) waits for the row lock this statement holds, or this statement's update waits for
 * the count's commit and then sees it (PostgreSQL re-reads a row changed under an UPDATE), and the
 * stream reads the run's events only once its count is committed.
 */
export const WATCHED_EVENTS_NOTICE_CTE = `notice AS (
  SELECT pg_notify('${EVENTS_CHANNEL}', held.id::text) FROM held WHERE held.watchers > 0 AND EXISTS (SELECT 1 FROM events)
)`;

const WATCH_SQL = 'UPDATE instances SET watchers = watchers + 1 WHERE id = $1';
const UNWATCH_SQL = 'UPDATE instances SET watchers = watchers - 1 WHERE id = $1 AND watchers > 0';

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
   * Settles once the notices this watch asked for are sent and heard: the process's LISTEN is in
   * place and, for `everyEvent`, the run's row counts this process's streams. Never rejects (the
   * streams then poll); a read after it sees every event written before it or is announced the rest.
   */
  ready: Promise<void>;
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

export interface WatchOptions {
  /** Every event of the run announced while this watch lasts (a live event stream), not only its end (always announced). */
  everyEvent?: boolean;
}

/**
 * One LISTEN per process, shared by every stream (a PostgreSQL LISTEN holds a connection of its
 * own). Subscribes on the first watch; if LISTEN fails the streams simply keep polling. A run's
 * row counts the processes whose streams watch every event of it (one count per process
 * however many of its streams watch), so that runs nobody watches are not announced call by call.
 */
export function createEventWakeups(database: Pick<Database, 'listen' | 'query'>, onError: (error: unknown, failed: string) => void) {
  const waiters = new Map<string, Set<Wake>>();
  /** The runs this process's streams watch every event of: how many streams, and whether the row's count took this process. */
  const counted = new Map<string, { streams: number; recorded: Promise<boolean> }>();
  /** Count updates under way, which close() waits for. */
  const updates = new Set<Promise<boolean>>();
  let subscription: Promise<(() => Promise<void>) | null> | null = null;
  let closed = false;

  const update = (sql: string, instanceId: string, failed: string): Promise<boolean> => {
    const done = database.query(sql, [instanceId]).then(
      () => true,
      (error: unknown) => {
        onError(error, failed);
        return false;
      },
    );
    updates.add(done);
    void done.then(() => updates.delete(done));
    return done;
  };
  const count = (instanceId: string): Promise<boolean> => {
    let entry = counted.get(instanceId);
    if (!entry) {
      const recorded = update(WATCH_SQL, instanceId, 'cannot count a live event stream on its run; the stream polls for its events');
      counted.set(instanceId, (entry = { streams: 0, recorded }));
    }
    entry.streams += 1;
    return entry.recorded;
  };
  const uncount = (instanceId: string): void => {
    const entry = counted.get(instanceId)!;
    if (--entry.streams > 0) return;
    counted.delete(instanceId);
    // Only a count that was taken, and after it (the pool may run two statements in either order).
    void entry.recorded.then(
      (taken) => taken && update(UNWATCH_SQL, instanceId, 'cannot take a closed event stream off its run; the run goes on announcing every event'),
    );
  };

  const subscribe = () => {
    subscription ??= database
      .listen(EVENTS_CHANNEL, (instanceId) => waiters.get(instanceId)?.forEach((wake) => wake()))
      .catch((error: unknown) => {
        onError(error, 'cannot LISTEN for instance events; event streams poll only');
        subscription = null;
        return null;
      });
  };

  return {
    /** Starts taking the notices of `instanceId`, for `wait`s between reads of what they announce. */
    watch(instanceId: string, options: WatchOptions = {}): NoticeWatch {
      if (!closed) subscribe();
      const everyEvent = options.everyEvent === true && !closed;
      const ready = Promise.all([subscription, everyEvent ? count(instanceId) : null]).then(() => {});
      let noticed = false;
      let wake: Wake | null = null;
      const onNotice = () => {
        noticed = true;
        wake?.();
      };
      const set = waiters.get(instanceId) ?? new Set<Wake>();
      set.add(onNotice);
      waiters.set(instanceId, set);
      let stopped = false;
      return {
        ready,
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
          if (stopped) return;
          stopped = true;
          set.delete(onNotice);
          if (set.size === 0 && waiters.get(instanceId) === set) waiters.delete(instanceId);
          if (everyEvent) uncount(instanceId);
        },
      };
    },
    /** Stops listening, once the count updates under way (those of streams just closed too) are done. */
    async close(): Promise<void> {
      closed = true;
      while (updates.size > 0) await Promise.all(updates);
      const unsubscribe = await subscription;
      await unsubscribe?.();
    },
  };
}

export type EventWakeups = ReturnType<typeof createEventWakeups>;
