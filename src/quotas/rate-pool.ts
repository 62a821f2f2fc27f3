// Rate limits shared by every process on one database, without a round trip per request.
// Each (subject, metric, UTC minute) has a counter row holding how much of the window's
// allowance has been handed out. A process takes a *share* of it with one atomic upsert that
// never hands out more than the limit, spends the share locally, and fetches the next share in
// the background once half of the current one is gone (and, near the end of a window, the
// first share of the next). So within a window no process admits more than it was granted:
// requests never exceed the limit; tokens exceed it only by what calls used beyond their
// estimate (docs/quotas.md, "Overshoot").
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { quotaWindows, type QuotaScope } from '../db/schema.js';
import { windowOf, type Window } from './windows.js';

export type RateMetric = 'requests' | 'tokens';

interface Bucket {
  window: Window;
  limit: number;
  /** Granted to this process and not yet spent; below zero when calls used more than charged. */
  balance: number;
  /** The window's total handed out to all processes, as of this process's last fetch. */
  granted: number;
  /** The window's allowance is all handed out (a fetch got less than it asked for). */
  exhausted: boolean;
  fetching: Promise<void> | null;
}

interface Slot {
  current: Bucket | null;
  next: Bucket | null;
}

export interface RateState {
  limit: number;
  remaining: number;
  resetMs: number;
}

export interface RatePoolOptions {
  sharesPerWindow: number;
  /** How long before a window ends a busy subject fetches its first share of the next. Default 5000 ms. */
  nextWindowLeadMs?: number;
  onError?: (error: unknown) => void;
}

const MAX_SLOTS = 100_000;

export function createRatePool(db: Db, options: RatePoolOptions) {
  const slots = new Map<string, Slot>();
  const lead = options.nextWindowLeadMs ?? 5000;
  const shareOf = (limit: number) => Math.max(1, Math.ceil(limit / options.sharesPerWindow));
  const newBucket = (window: Window, limit: number): Bucket => ({ window, limit, balance: 0, granted: 0, exhausted: false, fetching: null });

  async function fetchShare(scope: QuotaScope, id: string, metric: RateMetric, bucket: Bucket, want: number): Promise<void> {
    const limit = bucket.limit;
    const first = Math.min(want, limit);
    // In ON CONFLICT ... SET, "quota_windows"."amount" is the row's value before this update.
    const after = sql`greatest(${quotaWindows.amount}, least(${quotaWindows.amount} + ${want}::bigint, ${limit}::bigint))`;
    const [row] = await db
      .insert(quotaWindows)
      .values({ scope, subjectId: id, metric, windowStart: new Date(bucket.window.start), amount: first, lastGrant: first })
      .onConflictDoUpdate({
        target: [quotaWindows.scope, quotaWindows.subjectId, quotaWindows.metric, quotaWindows.windowStart],
        set: { amount: after, lastGrant: sql`${after} - ${quotaWindows.amount}` },
      })
      .returning({ amount: quotaWindows.amount, lastGrant: quotaWindows.lastGrant });
    const grant = row?.lastGrant ?? 0;
    bucket.balance += grant;
    bucket.granted = row?.amount ?? bucket.granted;
    if (grant < want) bucket.exhausted = true;
  }

  function startFetch(scope: QuotaScope, id: string, metric: RateMetric, bucket: Bucket, want: number): Promise<void> {
    bucket.fetching ??= fetchShare(scope, id, metric, bucket, want).finally(() => {
      bucket.fetching = null;
    });
    return bucket.fetching;
  }

  function background(scope: QuotaScope, id: string, metric: RateMetric, bucket: Bucket): void {
    startFetch(scope, id, metric, bucket, shareOf(bucket.limit)).catch((error: unknown) => options.onError?.(error));
  }

  /** The slot's bucket for the window `now` falls in, moving to the next window when it begins. */
  function bucketFor(key: string, limit: number, now: number): { slot: Slot; bucket: Bucket } {
    let slot = slots.get(key);
    if (!slot) {
      if (slots.size >= MAX_SLOTS) slots.clear();
      slot = { current: null, next: null };
      slots.set(key, slot);
    }
    const window = windowOf('requests', now);
    if (!slot.current || slot.current.window.start !== window.start) {
      slot.current = slot.next?.window.start === window.start ? slot.next : newBucket(window, limit);
      slot.next = null;
    }
    const bucket = slot.current;
    if (bucket.limit !== limit) {
      // A changed limit applies from now on; a raised one can hand out more.
      if (limit > bucket.limit) bucket.exhausted = false;
      bucket.limit = limit;
    }
    return { slot, bucket };
  }

  function prefetch(scope: QuotaScope, id: string, metric: RateMetric, slot: Slot, bucket: Bucket, now: number): void {
    if (!bucket.exhausted && !bucket.fetching && bucket.balance < shareOf(bucket.limit) / 2) background(scope, id, metric, bucket);
    if (!slot.next && bucket.window.end - now <= lead) {
      slot.next = newBucket({ start: bucket.window.end, end: bucket.window.end + 60_000 }, bucket.limit);
      background(scope, id, metric, slot.next);
    }
  }

  function state(bucket: Bucket, now: number): RateState {
    const remaining = bucket.exhausted ? Math.max(0, bucket.balance) : Math.max(0, bucket.limit - bucket.granted + bucket.balance);
    return { limit: bucket.limit, remaining: Math.floor(Math.min(bucket.limit, remaining)), resetMs: bucket.window.end - now };
  }

  return {
    /**
     * Takes `amount` from the subject's allowance for the window `now` falls in. Resolves with
     * null when admitted, or the state to report when the window's allowance is spent. A round
     * trip happens only when the local share cannot cover the amount.
     */
    async take(scope: QuotaScope, id: string, metric: RateMetric, limit: number, amount: number, now: number): Promise<RateState | null> {
      const key = `${scope}:${id}:${metric}`;
      const { slot, bucket } = bucketFor(key, limit, now);
      while (bucket.balance < amount && !bucket.exhausted) {
        await startFetch(scope, id, metric, bucket, Math.max(shareOf(limit), amount - bucket.balance));
      }
      if (bucket.balance < amount) return state(bucket, now);
      bucket.balance -= amount;
      prefetch(scope, id, metric, slot, bucket, now);
      return null;
    },

    /** Adds (refund) or removes (a call used more than charged) an amount in the window it was taken in. */
    adjust(scope: QuotaScope, id: string, metric: RateMetric, windowStart: number, delta: number): void {
      const bucket = slots.get(`${scope}:${id}:${metric}`)?.current;
      if (bucket?.window.start === windowStart) bucket.balance += delta;
    },

    /** Limit, remaining and time to reset, for the headers; null when this process has no state yet. */
    state(scope: QuotaScope, id: string, metric: RateMetric, limit: number, now: number): RateState {
      const bucket = slots.get(`${scope}:${id}:${metric}`)?.current;
      if (!bucket || bucket.window.start !== windowOf('requests', now).start) {
        return { limit, remaining: limit, resetMs: windowOf('requests', now).end - now };
      }
      return state(bucket, now);
    },
  };
}

export type RatePool = ReturnType<typeof createRatePool>;
