// Runs as an operator sees them, whoever made them: the admin API and `ladder-admin` answer
// with these same shapes, so a command prints the same whichever way it reached the database.
import { and, desc, eq, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { instances, type InstanceStatus } from '../db/schema.js';
import { notFound } from '../errors.js';
import { nanosToUsd } from '../money.js';
import { findAccount } from './accounts.js';
import type { InstanceRow } from './instances.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const DEFAULT_INSTANCE_LIMIT = 50;

export interface InstanceFilters {
  /** Runs made by this account (username). */
  account?: string | undefined;
  /** Runs of this ladder, whoever made them. */
  ladder?: { author: string; slug: string } | undefined;
  status?: InstanceStatus | undefined;
  limit?: number | undefined;
}

export function instanceSummary(row: InstanceRow) {
  return {
    id: row.id,
    status: row.status,
    ladder: `${row.author}/${row.slug}@v${row.ladderVersion}`,
    model: row.model,
    mode: row.mode,
    created_at: row.createdAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
    spend_usd: nanosToUsd(row.spendNanos),
    model_calls: row.modelCalls,
  };
}

/** Newest first, at most `limit` (default 50). */
export async function listInstances(db: Db, filters: InstanceFilters) {
  const where: SQL[] = [];
  if (filters.account) where.push(eq(instances.accountId, (await findAccount(db, filters.account)).id));
  if (filters.ladder) where.push(eq(instances.author, filters.ladder.author), eq(instances.slug, filters.ladder.slug));
  if (filters.status) where.push(eq(instances.status, filters.status));
  const rows = await db
    .select()
    .from(instances)
    .where(and(...where))
    .orderBy(desc(instances.createdAt))
    .limit(Math.max(1, filters.limit ?? DEFAULT_INSTANCE_LIMIT));
  return rows.map(instanceSummary);
}

export const isInstanceId = (id: string) => UUID_RE.test(id);
export const unknownInstance = (id: string) => notFound('instance_not_found', `No instance has id "${id}".`);

/** One run with its usage, knobs, answer or error; 404 instance_not_found for an unknown or malformed id. */
export async function showInstance(db: Db, id: string) {
  const [row] = isInstanceId(id) ? await db.select().from(instances).where(eq(instances.id, id)) : [];
  if (!row) throw unknownInstance(id);
  return { ...instanceSummary(row), usage: row.usage, knobs: row.knobs, answer: row.answer, error: row.error };
}
