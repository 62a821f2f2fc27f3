// Accounts and their API keys. Shared by the admin API and the admin command line, so
// both enforce the same rules and answer with the same errors.
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { accounts, apiKeys } from '../db/schema.js';
import { generateApiKey } from '../crypto/api-keys.js';
import { ApiError, conflict, invalidRequest, notFound } from '../errors.js';
import { RESERVED_USERNAMES, SLUG_PATTERN, USERNAME_PATTERN } from '../schemas/common.js';
import type { Principal } from './authenticator.js';
import type { LadderAccess } from './ladder-access.js';


const USERNAME_RE = new RegExp(USERNAME_PATTERN);
const ACCESS_ENTRY_RE = new RegExp(`^${USERNAME_PATTERN.slice(1, -1)}/(?:\\*|${SLUG_PATTERN.slice(1, -1)})$`);

export interface AccountView {
  id: string;
  username: string;
  created_at: string;
}

export interface ApiKeyView {
  id: string;
  key_prefix: string;
  name: string | null;
  access: LadderAccess;
  created_at: string;
  revoked_at: string | null;
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

export async function createAccount(db: Db, username: string): Promise<AccountView> {
  validateUsername(username);
  const [row] = await db.insert(accounts).values({ username }).onConflictDoNothing().returning();
  if (!row) throw conflict('username_taken', `username "${username}" is already taken.`, 'username');
  return { id: row.id, username: row.username, created_at: row.createdAt.toISOString() };
}

export async function listAccounts(db: Db): Promise<AccountView[]> {
  const rows = await db.select().from(accounts).orderBy(asc(accounts.username));
  return rows.map((row) => ({ id: row.id, username: row.username, created_at: row.createdAt.toISOString() }));
}

/** Deletes the account and, by cascade, its keys, provider connections, ladders and runs. */
export async function deleteAccount(db: Db, username: string): Promise<void> {
  const deleted = await db.delete(accounts).where(eq(accounts.username, username)).returning({ id: accounts.id });
  if (deleted.length === 0) throw notFound('account_not_found', `No account has username "${username}".`);
}

export async function findAccount(db: Db, username: string) {
  const [row] = await db.select().from(accounts).where(eq(accounts.username, username));
  if (!row) throw notFound('account_not_found', `No account has username "${username}".`);
  return row;
}

export async function createApiKey(
  db: Db,
  username: string,
  input: { name?: string | null; access?: LadderAccess },
): Promise<ApiKeyView & { key: string }> {
  const access = input.access ?? { mode: 'unrestricted', ladders: [] };
  validateAccess(access);
  const account = await findAccount(db, username);
  const generated = generateApiKey();
  const [row] = await db
    .insert(apiKeys)
    .values({
      accountId: account.id,
      name: input.name ?? null,
      keyPrefix: generated.prefix,
      keyHash: generated.hash,
      accessMode: access.mode,
      accessLadders: [...new Set(access.ladders)],
    })
    .returning();
  if (!row) throw new ApiError(500, 'api_error', 'internal_error', 'The API key could not be stored.');
  return { ...apiKeyView(row), key: generated.key };
}

export async function listApiKeys(db: Db, username: string): Promise<ApiKeyView[]> {
  const account = await findAccount(db, username);
  const rows = await db.select().from(apiKeys).where(eq(apiKeys.accountId, account.id)).orderBy(asc(apiKeys.createdAt));
  return rows.map(apiKeyView);
}

/** Marks the key revoked (the row stays, for audit); returns its prefix so caches can forget it. */
export async function revokeApiKey(db: Db, id: string): Promise<{ keyPrefix: string }> {
  const [revoked] = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .returning({ keyPrefix: apiKeys.keyPrefix });
  if (revoked) return revoked;
  // Revoking twice is not an error: the key is revoked either way.
  const [existing] = await db.select({ keyPrefix: apiKeys.keyPrefix }).from(apiKeys).where(eq(apiKeys.id, id));
  if (!existing) throw notFound('api_key_not_found', `No API key has id "${id}".`);
  return existing;
}

function apiKeyView(row: typeof apiKeys.$inferSelect): ApiKeyView {
  return {
    id: row.id,
    key_prefix: row.keyPrefix,
    name: row.name,
    access: { mode: row.accessMode, ladders: row.accessLadders },
    created_at: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

/** The owner of an account, as the ladder service expects its callers: the admin API and the CLI act as it. */
export function ownerOf(account: { id: string; username: string }): Principal {
  return { accountId: account.id, username: account.username, apiKeyId: '', access: { mode: 'unrestricted', ladders: [] } };
}
