// Accounts. Shared by the admin API and the admin command line, so both enforce the same
// rules and answer with the same errors; keys are in api-keys.ts.
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { accounts } from '../db/schema.js';
import { accountNotFound, conflict, invalidRequest } from '../errors.js';
import { RESERVED_USERNAMES, SLUG_PATTERN, USERNAME_PATTERN } from '../schemas/common.js';
import { recordAudit, type Actor } from './audit.js';
import type { Principal } from './authenticator.js';
import { notifyKeyChange } from './key-notices.js';
import type { LadderAccess } from './ladder-access.js';

const USERNAME_RE = new RegExp(USERNAME_PATTERN);
const ACCESS_ENTRY_RE = new RegExp(`^${USERNAME_PATTERN.slice(1, -1)}/(?:\\*|${SLUG_PATTERN.slice(1, -1)})$`);

export interface AccountView {
  id: string;
  username: string;
  created_at: string;
}

export function validateUsername(username: string): void {
  if (!USERNAME_RE.test(username)) {
    throw invalidRequest(
      'invalid_username',
      'username must be 3 to 39 characters of lowercase letters, digits and hyphens, starting and ending with a letter or digit.',
      'username',
    );
  }
  if (RESERVED_USERNAMES.has(username)) {
    throw invalidRequest('reserved_username', `username "${username}" is reserved.`, 'username');
  }
}

export function validateAccess(access: LadderAccess): void {
  if (access.mode === 'unrestricted' && access.ladders.length > 0) {
    throw invalidRequest('invalid_access', 'access.ladders must be empty when access.mode is "unrestricted".', 'access.ladders');
  }
  access.ladders.forEach((entry, i) => {
    if (!ACCESS_ENTRY_RE.test(entry)) {
      throw invalidRequest(
        'invalid_access',
        `access.ladders[${i}] must have the form "author/slug" or "author/*", got ${JSON.stringify(entry)}.`,
        `access.ladders[${i}]`,
      );
    }
  });
}

export async function createAccount(db: Db, username: string, actor: Actor): Promise<AccountView> {
  validateUsername(username);
  return db.transaction(async (tx) => {
    const [row] = await tx.insert(accounts).values({ username }).onConflictDoNothing().returning();
    if (!row) throw conflict('username_taken', `username "${username}" is already taken.`, 'username');
    await recordAudit(tx, actor, { action: 'account.created', account: row, targetId: row.id });
    return { id: row.id, username: row.username, created_at: row.createdAt.toISOString() };
  });
}

/** Deletes the account and, by cascade, its keys, provider connections, ladders and runs. */
export async function deleteAccount(db: Db, username: string, actor: Actor): Promise<void> {
  await db.transaction(async (tx) => {
    const [deleted] = await tx.delete(accounts).where(eq(accounts.username, username)).returning();
    if (!deleted) throw accountNotFound(username);
    await recordAudit(tx, actor, { action: 'account.deleted', account: deleted, targetId: deleted.id });
    // Its keys went with it (cascade): every process forgets them now, not at the cache's TTL.
    await notifyKeyChange(tx, { kind: 'account', accountId: deleted.id });
  });
}

export async function findAccount(db: Db, username: string) {
  const [row] = await db.select().from(accounts).where(eq(accounts.username, username));
  if (!row) throw accountNotFound(username);
  return row;
}

/** The owner of an account, as the ladder service expects its callers: the admin API and the CLI act as it. */
export function ownerOf(account: { id: string; username: string }): Principal {
  return { accountId: account.id, username: account.username, apiKeyId: '', access: { mode: 'unrestricted', ladders: [] }, scope: 'manage', expiresAt: null };
}
