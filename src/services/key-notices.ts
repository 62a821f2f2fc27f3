// Notices between processes that a key or a whole account changed (revoked, edited, disabled,
// enabled), carried by the database's NOTIFY inside the transaction that made the change, so
// they go out exactly when it commits. Every authenticator drops what it cached at once; the
// cache's TTL (KEY_CACHE_TTL_MS) stays the safety net for a listener that was reconnecting.
import { sql } from 'drizzle-orm';
import type { Database, Db } from '../db/client.js';

export const KEY_CHANNEL = 'ladder_api_key_changed';

export type KeyNotice = { kind: 'key'; prefix: string } | { kind: 'account'; accountId: string };

const encode = (notice: KeyNotice) => (notice.kind === 'key' ? `key:${notice.prefix}` : `account:${notice.accountId}`);

export function decodeKeyNotice(payload: string): KeyNotice | null {
  const [kind, value] = [payload.slice(0, payload.indexOf(':')), payload.slice(payload.indexOf(':') + 1)];
  if (kind === 'key' && value) return { kind, prefix: value };
  if (kind === 'account' && value) return { kind, accountId: value };
  return null;
}

/** Sends the notice; inside a transaction, it leaves when that commits. */
export async function notifyKeyChange(db: Db, notice: KeyNotice): Promise<void> {
  await db.execute(sql`select pg_notify(${KEY_CHANNEL}, ${encode(notice)})`);
}

export const onKeyChange = (database: Pick<Database, 'listen'>, handler: (notice: KeyNotice) => void) =>
  database.listen(KEY_CHANNEL, (payload) => {
    const notice = decodeKeyNotice(payload);
    if (notice) handler(notice);
  });
