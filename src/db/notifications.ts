// LISTEN for PostgreSQL notifications on a connection of its own, reconnecting when the
// server goes away. Notifications are a fast path only: a listener that was down misses
// some, so whoever relies on them also polls.
import pg from 'pg';

export type NotificationHandler = (payload: string) => void;

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;

/** Starts listening on `channel`; resolves once the first LISTEN is in place. */
export async function listenPostgres(url: string, channel: string, handler: NotificationHandler): Promise<() => Promise<void>> {
  let client: pg.Client | null = null;
  let stopped = false;
  let delay = RECONNECT_MIN_MS;
  let retry: NodeJS.Timeout | null = null;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (message) => {
      if (message.channel === channel) handler(message.payload ?? '');
    });
    next.on('error', () => reconnect(next));
    next.on('end', () => reconnect(next));
    await next.connect();
    await next.query(`LISTEN "${channel}"`);
    client = next;
    delay = RECONNECT_MIN_MS;
  };

  const schedule = () => {
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = null;
      connect().catch(() => {
        delay = Math.min(delay * 2, RECONNECT_MAX_MS);
        schedule();
      });
    }, delay);
    retry.unref();
  };

  const reconnect = (failed: pg.Client) => {
    if (client !== failed) return;
    client = null;
    failed.end().catch(() => {});
    schedule();
  };

  await connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}
