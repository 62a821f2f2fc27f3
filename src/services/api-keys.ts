// An account's API keys: created by the operator (admin API, command line) or by the account's
// own `manage` keys (/v1/api-keys). Every change is audited in its own transaction, and a
// change to a live key is announced to every process (key-notices.ts) when it commits.
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { accounts, apiKeys, type ApiKeyScope } from '../db/schema.js';
import { generateApiKey } from '../crypto/api-keys.js';
import { apiKeyNotFound, ApiError, conflict, invalidRequest } from '../errors.js';
import { validateAccess } from './accounts.js';
import { recordAudit, type Actor } from './audit.js';
import type { LadderAccess } from './ladder-access.js';
import { notifyKeyChange } from './key-notices.js';

export interface ApiKeyView {
  id: string;
  key_prefix: string;
  name: string | null;
  scope: ApiKeyScope;
  access: LadderAccess;
  expires_at: string | null;
  created_at: string;
  revoked_at: string | null;
}

export interface NewKeyInput {
  name?: string | null;
  scope?: ApiKeyScope;
  access?: LadderAccess;
  /** ISO 8601; must lie in the future. */
  expires_at?: string | null;
}

export interface KeyChange {
  name?: string | null;
  scope?: ApiKeyScope;
  access?: LadderAccess;
  expires_at?: string | null;
}

type Account = { id: string; username: string };

/** The instant `expires_at` names, null for never; 400 unless it is a real date-time in the future. */
export function parseExpiry(value: string | null | undefined, now = Date.now()): Date | null {
  if (value === null || value === undefined) return null;
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw invalidRequest('invalid_expires_at', `expires_at must be an ISO 8601 date-time with a time zone, got ${JSON.stringify(value)}.`, 'expires_at');
  if (ms <= now) throw invalidRequest('invalid_expires_at', 'expires_at must lie in the future.', 'expires_at');
  return new Date(ms);
}

const unique = (access: LadderAccess): LadderAccess => ({ mode: access.mode, ladders: [...new Set(access.ladders)] });

/** What an audit entry says of a key: never the key or its hash. */
const described = (row: typeof apiKeys.$inferSelect) => ({
  key_prefix: row.keyPrefix,
  name: row.name,
  scope: row.scope,
  access: { mode: row.accessMode, ladders: row.accessLadders },
  expires_at: row.expiresAt?.toISOString() ?? null,
});

export async function createApiKey(
  db: Db,
  account: Account,
  input: NewKeyInput,
  actor: Actor,
): Promise<ApiKeyView & { key: string }> {
  const access = unique(input.access ?? { mode: 'unrestricted', ladders: [] });
  validateAccess(access);
  const expiresAt = parseExpiry(input.expires_at);
  const generated = generateApiKey();
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(apiKeys)
      .values({
        accountId: account.id,
        name: input.name ?? null,
        keyPrefix: generated.prefix,
        keyHash: generated.hash,
        accessMode: access.mode,
        accessLadders: access.ladders,
        scope: input.scope ?? 'use',
        expiresAt,
        createdByKeyId: actor.type === 'api_key' ? actor.keyId : null,
      })
      .returning();
    if (!row) throw new ApiError(500, 'api_error', 'internal_error', 'The API key could not be stored.');
    await recordAudit(tx, actor, { action: 'api_key.created', account, targetId: row.id, details: described(row) });
    return { ...apiKeyView(row), key: generated.key };
  });
}

export async function listApiKeys(db: Db, accountId: string): Promise<ApiKeyView[]> {
  const rows = await db.select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  return rows.map(apiKeyView);
}

/** The key, if it is the account's; with no account, any key (the operator's view). */
async function findKey(db: Db, id: string, accountId: string | null) {
  const [row] = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), accountId ? eq(apiKeys.accountId, accountId) : undefined));
  if (!row) throw apiKeyNotFound(id);
  return row;
}

export async function getApiKey(db: Db, accountId: string, id: string): Promise<ApiKeyView> {
  return apiKeyView(await findKey(db, id, accountId));
}

/** Changes what the body names; a revoked key stays as it was revoked (409). */
export async function updateApiKey(db: Db, account: Account, id: string, change: KeyChange, actor: Actor): Promise<ApiKeyView> {
  if (change.access) validateAccess(change.access);
  const expiresAt = change.expires_at === undefined ? undefined : parseExpiry(change.expires_at);
  return db.transaction(async (tx) => {
    const before = await findKey(tx, id, account.id);
    if (before.revokedAt) throw conflict('api_key_revoked', `API key "${id}" is revoked; a revoked key cannot be changed.`);
    const access = change.access ? unique(change.access) : undefined;
    const [row] = await tx
      .update(apiKeys)
      .set({
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.scope !== undefined ? { scope: change.scope } : {}),
        ...(access ? { accessMode: access.mode, accessLadders: access.ladders } : {}),
        ...(expiresAt !== undefined ? { expiresAt } : {}),
      })
      .where(eq(apiKeys.id, id))
      .returning();
    await recordAudit(tx, actor, { action: 'api_key.updated', account, targetId: id, details: { before: described(before), after: described(row!) } });
    await notifyKeyChange(tx, { kind: 'key', prefix: row!.keyPrefix });
    return apiKeyView(row!);
  });
}

/**
 * Marks the key revoked (the row stays, for audit) and tells every process to drop it; returns
 * its prefix. Revoking twice is not an error: the key is revoked either way. With an account,
 * only that account's key.
 */
export async function revokeApiKey(db: Db, id: string, actor: Actor, accountId: string | null = null): Promise<ApiKeyView> {
  return db.transaction(async (tx) => {
    const existing = await findKey(tx, id, accountId);
    const [revoked] = await tx
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning();
    if (!revoked) return apiKeyView(existing);
    const { accountUsername } = await accountOf(tx, revoked.accountId);
    await recordAudit(tx, actor, { action: 'api_key.revoked', account: { id: revoked.accountId, username: accountUsername }, targetId: id, details: { key_prefix: revoked.keyPrefix } });
    await notifyKeyChange(tx, { kind: 'key', prefix: revoked.keyPrefix });
    return apiKeyView(revoked);
  });
}

async function accountOf(db: Db, accountId: string): Promise<{ accountUsername: string }> {
  const [row] = await db.select({ accountUsername: accounts.username }).from(accounts).where(eq(accounts.id, accountId));
  return row ?? { accountUsername: '' };
}

export function apiKeyView(row: typeof apiKeys.$inferSelect): ApiKeyView {
  return {
    id: row.id,
    key_prefix: row.keyPrefix,
    name: row.name,
    scope: row.scope,
    access: { mode: row.accessMode, ladders: row.accessLadders },
    expires_at: row.expiresAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}
