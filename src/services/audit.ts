// The audit log: one row per administrative change, written in the transaction that made the
// change, so a change is never without its entry nor an entry without its change. Details
// name what changed (a key's name, scope, access, expiry; limits); never a key or a secret.
import { and, desc, eq, lt } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { auditLog, type AuditActorType } from '../db/schema.js';
import type { AuditAction } from '../schemas/accounts.js';
import type { Principal } from './authenticator.js';

/** Who made a change: the operator through ADMIN_TOKEN or the command line, or an account's key. */
export type Actor = { type: 'admin' } | { type: 'cli' } | { type: 'api_key'; keyId: string };

export const ADMIN_ACTOR: Actor = { type: 'admin' };
export const CLI_ACTOR: Actor = { type: 'cli' };
export const keyActor = (principal: Principal): Actor => ({ type: 'api_key', keyId: principal.apiKeyId });

export interface AuditChange {
  action: AuditAction;
  account: { id: string; username: string } | null;
  targetId?: string | null;
  details?: Record<string, unknown>;
}

export async function recordAudit(db: Db, actor: Actor, change: AuditChange): Promise<void> {
  await db.insert(auditLog).values({
    actorType: actor.type,
    actorKeyId: actor.type === 'api_key' ? actor.keyId : null,
    accountId: change.account?.id ?? null,
    username: change.account?.username ?? null,
    action: change.action,
    targetId: change.targetId ?? null,
    details: change.details ?? {},
  });
}

export interface AuditEntryView {
  id: string;
  created_at: string;
  actor: { type: AuditActorType; api_key_id: string | null };
  account: { id: string; username: string } | null;
  action: AuditAction;
  target_id: string | null;
  details: Record<string, unknown>;
}

export interface AuditFilter {
  /** The account's username at the time of the change (deleted accounts included). */
  username?: string;
  action?: AuditAction;
  /** Only entries older than this id (the cursor). */
  before?: number;
  limit: number;
}

/** Newest first; one more row than asked tells whether another page follows. */
export async function listAudit(db: Db, filter: AuditFilter): Promise<{ entries: AuditEntryView[]; hasMore: boolean }> {
  const rows = await db
    .select()
    .from(auditLog)
    .where(
      and(
        filter.username ? eq(auditLog.username, filter.username) : undefined,
        filter.action ? eq(auditLog.action, filter.action) : undefined,
        filter.before !== undefined ? lt(auditLog.id, filter.before) : undefined,
      ),
    )
    .orderBy(desc(auditLog.id))
    .limit(filter.limit + 1);
  return { entries: rows.slice(0, filter.limit).map(auditView), hasMore: rows.length > filter.limit };
}

function auditView(row: typeof auditLog.$inferSelect): AuditEntryView {
  return {
    id: String(row.id),
    created_at: row.createdAt.toISOString(),
    actor: { type: row.actorType, api_key_id: row.actorKeyId },
    account: row.accountId && row.username ? { id: row.accountId, username: row.username } : null,
    action: row.action as AuditAction,
    target_id: row.targetId,
    details: row.details,
  };
}
