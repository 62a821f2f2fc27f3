// The quota gate: every model call of an account (direct or made by a ladder run) passes
// here first. Spend quotas answer 402, rates 429; an admitted call is settled afterwards with
// the tokens it really used. A warm subject is checked from memory alone.
import type { QuotaScope } from '../db/schema.js';
import { quotaExceeded, rateLimitExceeded } from '../errors.js';
import type { Usage } from '../providers/types.js';
import { hasLimits, type Limits, type LimitsStore, type SubjectLimits } from './limits-store.js';
import type { RatePool, RateMetric, RateState } from './rate-pool.js';
import { formatUsd, nanosOf } from '../money.js';
import { worstCaseNanos, type SpendDemand } from './spend-demand.js';
import type { LimitedCounter, SpendHolds, Taken } from './spend-holds.js';
import type { SpendMetric, SpendTracker } from './spend.js';
import { formatReset, windowOf, type Clock } from './windows.js';

/** Whose limits a call counts against. */
export interface QuotaSubject {
  accountId: string;
  username: string;
  apiKeyId: string | null;
}

/** An admitted call: settle it once with what it used (null when it failed) and what it cost. */
export interface Admission {
  settle(usage: Usage | null, costNanos?: number): void;
  /** x-ratelimit-* headers for the answer; empty when no rate limit applies. */
  headers(): Record<string, string>;
  /** The output cap the call must be sent with (what the spend quota pays), when it was lowered. */
  maxTokens?: number;
}

/** The admission of a subject without limits (compared by identity: it has no headers to set). */
export const UNLIMITED: Admission = { settle: () => {}, headers: () => ({}) };

/** What a call holds of its spend quotas while it runs. */
interface SpendHold {
  taken: Taken;
  /** Whole nanos held in each counter. */
  nanos: number;
  maxTokens?: number;
}

interface Scoped {
  scope: QuotaScope;
  id: string;
  limits: Limits;
  label: string;
}

const RATE_FIELD: Record<RateMetric, 'requests_per_minute' | 'tokens_per_minute'> = { requests: 'requests_per_minute', tokens: 'tokens_per_minute' };
const SPEND_FIELD: Record<SpendMetric, 'usd_per_day' | 'usd_per_month'> = { usd_day: 'usd_per_day', usd_month: 'usd_per_month' };

/** A spend limit in nanos (the store keeps limits in whole nanos; Limits shows them in USD). */
function spendLimit(limits: Limits, metric: SpendMetric): number | null {
  const usd = limits[SPEND_FIELD[metric]];
  return usd === null ? null : nanosOf(usd);
}

export function createQuotaGate(deps: { limits: LimitsStore; rates: RatePool; spend: SpendTracker; holds: SpendHolds; clock: Clock }) {
  const { rates, spend, holds, clock } = deps;

  /** The subject's limited scopes; at once when its limits are cached, as they nearly always are (no promise to wait on). */
  function scopesOf(subject: QuotaSubject): Scoped[] | Promise<Scoped[]> {
    const found = deps.limits.forSubject(subject.accountId, subject.apiKeyId);
    return found instanceof Promise ? found.then((limits) => limitedScopes(subject, limits)) : limitedScopes(subject, found);
  }

  function limitedScopes(subject: QuotaSubject, { account, key }: SubjectLimits): Scoped[] {
    const scoped: Scoped[] = [];
    if (subject.apiKeyId && hasLimits(key)) scoped.push({ scope: 'api_key', id: subject.apiKeyId, limits: key, label: `API key ${subject.apiKeyId}` });
    if (hasLimits(account)) scoped.push({ scope: 'account', id: subject.accountId, limits: account, label: `account "${subject.username}"` });
    return scoped;
  }

  async function checkSpend(scoped: Scoped[], now: number): Promise<void> {
    for (const s of scoped) {
      for (const metric of ['usd_day', 'usd_month'] as const) {
        const limit = spendLimit(s.limits, metric);
        if (limit === null) continue;
        const spent = await spend.spent(s.scope, s.id, metric, now);
        if (spent >= limit) {
          const window = windowOf(metric, now);
          const period = metric === 'usd_day' ? 'daily' : 'monthly';
          throw quotaExceeded(
            `Spend quota exceeded: ${s.label} has spent ${formatUsd(spent)} of its ${period} limit of ${formatUsd(limit)} ` +
              `(UTC ${metric === 'usd_day' ? 'day' : 'month'}); the quota resets at ${new Date(window.end).toISOString()}.`,
          );
        }
      }
    }
  }

  const spendLimited = (scoped: Scoped[]) => scoped.some((s) => s.limits.usd_per_day !== null || s.limits.usd_per_month !== null);

  /**
   * Holds the call's worst case in every spend counter that limits it (docs/quotas.md, "Spend
   * quotas"), lowering a cap that is ours to choose to what the tightest counter pays; 402 when
   * even the smallest worst case does not fit in one of them.
   */
  async function holdSpend(scoped: Scoped[], demand: SpendDemand, now: number): Promise<SpendHold> {
    const counters: Array<LimitedCounter & { s: Scoped }> = [];
    for (const s of scoped) {
      for (const metric of ['usd_day', 'usd_month'] as const) {
        const limit = spendLimit(s.limits, metric);
        if (limit !== null) counters.push({ scope: s.scope, id: s.id, metric, windowStart: windowOf(metric, now).start, limit, s });
      }
    }
    const want = worstCaseNanos(demand, demand.maxCap);
    const least = worstCaseNanos(demand, demand.minCap);
    const taken = await holds.hold(counters, want, least);
    // What every counter granted: the call may use the least of them.
    let nanos = Math.min(...taken.held);
    let maxTokens: number | undefined;
    const refused = taken.held.findIndex((h) => h < least);
    if (refused === -1 && demand.lowerable) {
      const affordable = demand.perCapTokenNanos > 0 ? Math.floor((nanos - demand.promptNanos) / demand.perCapTokenNanos + 1e-9) : demand.maxCap;
      maxTokens = Math.max(demand.minCap, Math.min(demand.maxCap, affordable));
      nanos = Math.min(nanos, worstCaseNanos(demand, maxTokens));
    }
    holds.keep(taken, refused === -1 ? nanos : null);
    if (refused !== -1) {
      const c = counters[refused]!;
      const period = c.metric === 'usd_day' ? 'daily' : 'monthly';
      throw quotaExceeded(
        `Spend quota exceeded: ${c.s.label} has spent or holds for calls in flight ${formatUsd(taken.amounts[refused]!)} of its ${period} limit of ` +
          `${formatUsd(c.limit)}, and this call may cost up to ${formatUsd(least)} (UTC ${c.metric === 'usd_day' ? 'day' : 'month'}); ` +
          `the quota resets at ${new Date(windowOf(c.metric, now).end).toISOString()}.`,
      );
    }
    return { taken, nanos, ...(maxTokens !== undefined ? { maxTokens } : {}) };
  }

  /** The tightest limit of each rate metric over the subject's scopes, as OpenAI's headers. */
  function rateHeaders(scoped: Scoped[], now: number, refused?: RateState & { metric: RateMetric }): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const metric of ['requests', 'tokens'] as const) {
      let tightest: RateState | null = refused?.metric === metric ? refused : null;
      for (const s of scoped) {
        const limit = s.limits[RATE_FIELD[metric]];
        if (limit === null) continue;
        const state = rates.state(s.scope, s.id, metric, limit, now);
        if (!tightest || state.remaining < tightest.remaining) tightest = state;
      }
      if (!tightest) continue;
      headers[`x-ratelimit-limit-${metric}`] = String(tightest.limit);
      headers[`x-ratelimit-remaining-${metric}`] = String(tightest.remaining);
      headers[`x-ratelimit-reset-${metric}`] = formatReset(tightest.resetMs);
    }
    return headers;
  }

  return {
    /**
     * Before a model call: 402 when a spend quota cannot pay its worst case (`demand`, computed
     * only when a spend limit applies), 429 when a rate is used up; otherwise holds the worst
     * case, charges one request and `estimatedTokens` (capped at the token limit) to the key
     * and the account, and returns the admission to settle after the call.
     */
    async admit(subject: QuotaSubject, estimatedTokens: number, demand?: () => SpendDemand): Promise<Admission> {
      const found = scopesOf(subject);
      const scoped = found instanceof Promise ? await found : found;
      if (scoped.length === 0) return UNLIMITED;
      const now = clock();
      let hold: SpendHold | null = null;
      if (demand && spendLimited(scoped)) hold = await holdSpend(scoped, demand(), now);
      else await checkSpend(scoped, now);
      // The part not spent goes back to this process's slice at once; the spent part once the ledger has recorded it.
      const giveBack = (costNanos: number) => {
        if (hold) holds.settle(hold.taken, hold.nanos, Math.min(costNanos, hold.nanos), clock());
      };
      const taken: Array<{ s: Scoped; metric: RateMetric; amount: number }> = [];
      const windowStart = windowOf('requests', now).start;
      for (const s of scoped) {
        for (const metric of ['requests', 'tokens'] as const) {
          const limit = s.limits[RATE_FIELD[metric]];
          if (limit === null) continue;
          const amount = metric === 'requests' ? 1 : Math.min(estimatedTokens, limit);
          const refused = await rates.take(s.scope, s.id, metric, limit, amount, now);
          if (refused) {
            for (const t of taken) rates.adjust(t.s.scope, t.s.id, t.metric, windowStart, t.amount);
            giveBack(0);
            const retryAfter = Math.max(1, Math.ceil(refused.resetMs / 1000));
            const what = metric === 'requests' ? 'requests per minute' : 'tokens per minute';
            const asked = metric === 'tokens' ? ` (this request is estimated at ${amount} tokens, ${refused.remaining} remain)` : '';
            throw rateLimitExceeded(`Rate limit reached for ${what} on ${s.label}: limit ${limit}${asked}. Retry after ${retryAfter}s.`, {
              'retry-after': String(retryAfter),
              ...rateHeaders(scoped, now, { ...refused, metric }),
            });
          }
          taken.push({ s, metric, amount });
        }
      }
      let settled = false;
      return {
        settle(usage, costNanos = 0) {
          if (settled) return;
          settled = true;
          giveBack(usage ? costNanos : 0);
          for (const t of taken) {
            if (t.metric !== 'tokens') continue;
            // Charged the estimate; now the truth: refund the rest, or charge the excess.
            rates.adjust(t.s.scope, t.s.id, 'tokens', windowStart, t.amount - (usage?.total_tokens ?? 0));
          }
        },
        headers: () => rateHeaders(scoped, clock()),
        ...(hold?.maxTokens !== undefined ? { maxTokens: hold.maxTokens } : {}),
      };
    },

    /** When a run starts: refuses (402/429) a subject whose quota or rate is already spent, taking nothing. */
    async checkRunStart(subject: QuotaSubject): Promise<void> {
      const scoped = await scopesOf(subject);
      if (scoped.length === 0) return;
      const now = clock();
      await checkSpend(scoped, now);
      for (const s of scoped) {
        const limit = s.limits.requests_per_minute;
        if (limit === null) continue;
        const state = rates.state(s.scope, s.id, 'requests', limit, now);
        if (state.remaining <= 0) {
          const retryAfter = Math.max(1, Math.ceil(state.resetMs / 1000));
          throw rateLimitExceeded(`Rate limit reached for requests per minute on ${s.label}: limit ${limit}. Retry after ${retryAfter}s.`, {
            'retry-after': String(retryAfter),
            ...rateHeaders(scoped, now),
          });
        }
      }
    },

    /** The current x-ratelimit-* headers of a subject (for answers that made no call of their own). */
    async headers(subject: QuotaSubject): Promise<Record<string, string>> {
      const scoped = await scopesOf(subject);
      return scoped.length === 0 ? {} : rateHeaders(scoped, clock());
    },
  };
}

export type QuotaGate = ReturnType<typeof createQuotaGate>;
