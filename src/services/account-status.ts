// Disabling and enabling an account. Disabling commits the flag, its audit entry and a key
// notice together, so every process answers the account's keys 401 account_disabled as soon as
// it commits; then the account's runs in flight are cancelled: queued ones at once, running
// ones through the cancel notice that reaches whichever process holds them.
import { and, eq, inArray, isNotNull, isNull } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { accounts, instances } from '../db/schema.js';
import { runCancelled } from '../ladders/engine/limits.js';
import { findAccount } from './accounts.js';
import { recordAudit, type Actor } from './audit.js';
import { createInstanceService } from './instances.js';
import { notifyKeyChange } from './key-notices.js';
import { createRunNotices } from './run-notices.js';

export interface StatusChange {
  /** False when the account already was as asked (nothing changed, nothing audited). */
  changed: boolean;
  /** Queued runs cancelled at once. */
  pendingCancelled: number;
  /** Running runs told to stop. */
  runningCancelled: number;
}

// A run moves on at most twice (pending, running, finished) while it is being cancelled.
const ATTEMPTS = 3;

export async function setAccountDisabled(
  database: Pick<Database, 'db' | 'query' | 'listen'>,
  username: string,
  disabled: boolean,
  actor: Actor,
): Promise<StatusChange> {
  const { db } = database;
  const account = await findAccount(db, username);
  const changed = await db.transaction(async (tx) => {
    const [row] = await tx
      .update(accounts)
      .set({ disabledAt: disabled ? new Date() : null })
      .where(and(eq(accounts.id, account.id), disabled ? isNull(accounts.disabledAt) : isNotNull(accounts.disabledAt)))
      .returning({ id: accounts.id });
    if (!row) return false;
    await recordAudit(tx, actor, { action: disabled ? 'account.disabled' : 'account.enabled', account, targetId: account.id });
    await notifyKeyChange(tx, { kind: 'account', accountId: account.id });
    return true;
  });
  const result = { changed, pendingCancelled: 0, runningCancelled: 0 };
  // Disabling twice still cancels: a run may have been queued between the two.
  if (disabled) Object.assign(result, await cancelAccountRuns(database, account.id));
  return result;
}

async function cancelAccountRuns(database: Pick<Database, 'db' | 'query' | 'listen'>, accountId: string) {
  const runs = createInstanceService(database.db);
  const notices = createRunNotices(database);
  let pendingCancelled = 0;
  let runningCancelled = 0;
  const underway = await database.db
    .select({ id: instances.id })
    .from(instances)
    .where(and(eq(instances.accountId, accountId), inArray(instances.status, ['pending', 'running'])));
  for (const { id } of underway) {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (await runs.cancelPending(accountId, id, runCancelled())) {
        pendingCancelled++;
        break;
      }
      if (await runs.requestCancel(accountId, id)) {
        await notices.cancelRequested(id);
        runningCancelled++;
        break;
      }
    }
  }
  return { pendingCancelled, runningCancelled };
}
