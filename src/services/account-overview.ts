// What the operator and the account holder read about an account: the operator's list (cursor,
// filter by name), an account's keys count, limits and this month's usage.
import { and, asc, eq, gt, like, sql } from 'drizzle-orm';
import type { Database, Db } from '../db/client.js';
import { accounts } from '../db/schema.js';
import { nanosOf, nanosToUsd } from '../money.js';
import { createLimitsStore, type Limits } from '../quotas/limits-store.js';
import { usageReport } from '../usage/report.js';
import { findAccount } from './accounts.js';

export interface AdminAccountView {
  id: string;
  username: string;
  created_at: string;
  disabled: boolean;
  disabled_at: string | null;
  /** Keys that work: neither revoked nor expired. */
  key_count: number;
}

export interface MonthUsage {
  /** The first instant of the current UTC month. */
  start: string;
  requests: number;
  total_tokens: number;
  cost_usd: number;
}

export type AccountDetail = AdminAccountView & { limits: Limits; this_month: MonthUsage };

// Spelled out: inside a subquery, drizzle would leave the outer `accounts.id` unqualified.
const liveKeys = sql<number>`(select count(*)::int from api_keys k where k.account_id = "accounts"."id"
  and k.revoked_at is null and (k.expires_at is null or k.expires_at > now()))`;

const columns = { id: accounts.id, username: accounts.username, createdAt: accounts.createdAt, disabledAt: accounts.disabledAt, keyCount: liveKeys };

function view(row: { id: string; username: string; createdAt: Date; disabledAt: Date | null; keyCount: number }): AdminAccountView {
  return {
    id: row.id,
    username: row.username,
    created_at: row.createdAt.toISOString(),
    disabled: row.disabledAt !== null,
    disabled_at: row.disabledAt?.toISOString() ?? null,
    key_count: Number(row.keyCount),
  };
}

export interface AccountListFilter {
  /** Usernames containing this text. */
  name?: string;
  /** Only usernames after this one (the cursor). */
  after?: string;
  limit: number;
}

/** By username; one more row than asked tells whether another page follows. */
export async function listAccounts(db: Db, filter: AccountListFilter): Promise<{ accounts: AdminAccountView[]; hasMore: boolean }> {
  // Usernames hold no LIKE wildcards, but a filter may: they are escaped, so `_` matches `_` only.
  const pattern = filter.name ? `%${filter.name.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const rows = await db
    .select(columns)
    .from(accounts)
    .where(and(pattern ? like(accounts.username, pattern) : undefined, filter.after ? gt(accounts.username, filter.after) : undefined))
    .orderBy(asc(accounts.username))
    .limit(filter.limit + 1);
  return { accounts: rows.slice(0, filter.limit).map(view), hasMore: rows.length > filter.limit };
}

/** Requests, tokens and spend of the current UTC month, from the usage ledger. */
export async function monthUsage(database: Pick<Database, 'query'>, accountId: string, now: number): Promise<MonthUsage> {
  const today = new Date(now);
  const start = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1);
  // A range must not be empty: at the month's very first instant, nothing has been spent.
  const report = now > start ? await usageReport(database, accountId, { start, end: now }, 'day') : { data: [] };
  const sum = (pick: (row: (typeof report.data)[number]) => number) => report.data.reduce((total, row) => total + pick(row), 0);
  return {
    start: new Date(start).toISOString(),
    requests: sum((r) => r.requests),
    total_tokens: sum((r) => r.total_tokens),
    // Summed as nanos: adding the days' dollars as doubles is where float noise came from.
    cost_usd: nanosToUsd(sum((r) => nanosOf(r.cost_usd))),
  };
}

export async function accountDetail(database: Pick<Database, 'db' | 'query'>, username: string, now: number): Promise<AccountDetail> {
  const account = await findAccount(database.db, username);
  const [row] = await database.db.select(columns).from(accounts).where(eq(accounts.id, account.id));
  const limits = await createLimitsStore(database.db, 0).get('account', account.id);
  return { ...view(row!), limits, this_month: await monthUsage(database, account.id, now) };
}
