// The limits set on accounts and API keys, and a per-subject cache so that a warm request
// reads them without a database round trip. A change made on this node is seen at once;
// other nodes see it within the cache TTL (KEY_CACHE_TTL_MS), refreshed in the background.
import { and, eq, inArray, or } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { quotaLimits, type QuotaScope } from '../db/schema.js';
import { nanosToUsd, usdToNanos } from '../money.js';

/** The limits as the API shows them: spend in USD (stored as nanos, src/money.ts). */
export interface Limits {
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  usd_per_day: number | null;
  usd_per_month: number | null;
}

export const NO_LIMITS: Readonly<Limits> = Object.freeze({
  requests_per_minute: null,
  tokens_per_minute: null,
  usd_per_day: null,
  usd_per_month: null,
});

export const hasLimits = (l: Limits) =>
  l.requests_per_minute !== null || l.tokens_per_minute !== null || l.usd_per_day !== null || l.usd_per_month !== null;

export interface SubjectLimits {
  account: Limits;
  key: Limits;
}

type Row = typeof quotaLimits.$inferSelect;

const toLimits = (row: Row | undefined): Limits =>
  row
    ? {
        requests_per_minute: row.requestsPerMinute,
        tokens_per_minute: row.tokensPerMinute,
        usd_per_day: row.nanosPerDay === null ? null : nanosToUsd(row.nanosPerDay),
        usd_per_month: row.nanosPerMonth === null ? null : nanosToUsd(row.nanosPerMonth),
      }
    : NO_LIMITS;

const nanosOf = (usd: number | null, param: string) => (usd === null ? null : usdToNanos(usd, param));

const MAX_CACHED = 50_000;

export function createLimitsStore(db: Db, ttlMs: number) {
  const cache = new Map<string, { limits: Limits; expiresAt: number }>();
  const refreshing = new Set<string>();
  const cacheKey = (scope: QuotaScope, id: string) => `${scope}:${id}`;

  function remember(scope: QuotaScope, id: string, limits: Limits): void {
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(cacheKey(scope, id), { limits, expiresAt: Date.now() + ttlMs });
  }

  async function load(accountId: string, apiKeyId: string | null): Promise<SubjectLimits> {
    const rows = await db
      .select()
      .from(quotaLimits)
      .where(
        or(
          and(eq(quotaLimits.scope, 'account'), eq(quotaLimits.subjectId, accountId)),
          apiKeyId ? and(eq(quotaLimits.scope, 'api_key'), eq(quotaLimits.subjectId, apiKeyId)) : undefined,
        ),
      );
    const account = toLimits(rows.find((r) => r.scope === 'account'));
    const key = apiKeyId ? toLimits(rows.find((r) => r.scope === 'api_key')) : NO_LIMITS;
    remember('account', accountId, account);
    if (apiKeyId) remember('api_key', apiKeyId, key);
    return { account, key };
  }

  return {
    /** The subject's limits: from the cache when present (stale entries refresh in the background). */
    forSubject(accountId: string, apiKeyId: string | null): SubjectLimits | Promise<SubjectLimits> {
      const account = cache.get(cacheKey('account', accountId));
      const key = apiKeyId ? cache.get(cacheKey('api_key', apiKeyId)) : { limits: NO_LIMITS, expiresAt: Infinity };
      if (!account || !key) return load(accountId, apiKeyId);
      const now = Date.now();
      if (account.expiresAt <= now || key.expiresAt <= now) {
        const id = `${accountId}|${apiKeyId}`;
        if (!refreshing.has(id)) {
          refreshing.add(id);
          load(accountId, apiKeyId).catch(() => {}).finally(() => refreshing.delete(id));
        }
      }
      return { account: account.limits, key: key.limits };
    },

    async get(scope: QuotaScope, id: string): Promise<Limits> {
      const [row] = await db.select().from(quotaLimits).where(and(eq(quotaLimits.scope, scope), eq(quotaLimits.subjectId, id)));
      return toLimits(row);
    },

    async many(scope: QuotaScope, ids: string[]): Promise<Map<string, Limits>> {
      if (ids.length === 0) return new Map();
      const rows = await db.select().from(quotaLimits).where(and(eq(quotaLimits.scope, scope), inArray(quotaLimits.subjectId, ids)));
      return new Map(ids.map((id) => [id, toLimits(rows.find((r) => r.subjectId === id))]));
    },

    /** Replaces the subject's limits (all null removes the row); this node applies them at once. */
    async set(scope: QuotaScope, id: string, limits: Limits): Promise<Limits> {
      // Validated (whole nanos) before anything is written; what is kept is what is shown.
      const row = {
        requestsPerMinute: limits.requests_per_minute ?? null,
        tokensPerMinute: limits.tokens_per_minute ?? null,
        nanosPerDay: nanosOf(limits.usd_per_day ?? null, 'usd_per_day'),
        nanosPerMonth: nanosOf(limits.usd_per_month ?? null, 'usd_per_month'),
      };
      if (!hasLimits(limits)) {
        await db.delete(quotaLimits).where(and(eq(quotaLimits.scope, scope), eq(quotaLimits.subjectId, id)));
      } else {
        const values = { ...row, updatedAt: new Date() };
        await db
          .insert(quotaLimits)
          .values({ scope, subjectId: id, ...values })
          .onConflictDoUpdate({ target: [quotaLimits.scope, quotaLimits.subjectId], set: values });
      }
      const stored = toLimits({ scope, subjectId: id, ...row, updatedAt: new Date() });
      remember(scope, id, stored);
      return stored;
    },
  };
}

export type LimitsStore = ReturnType<typeof createLimitsStore>;
