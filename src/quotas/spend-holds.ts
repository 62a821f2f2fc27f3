// Spend held in the shared spend counters themselves, so that every process sees it
// (docs/quotas.md, "Spend quotas"). A counter's `amount` is what ledger batches recorded plus
// what processes hold, and a process adds to it only with an atomic upsert that keeps it within
// the limit. Each process holds a *slice* of each counter it uses: a call's worst case is taken
// from the process's unused remainder of the slice, in memory; only when that is short does
// the call go to the database, with one statement for all its counters that takes the shortfall
// plus a further slice (growing while calls keep coming, never more than a quarter of what then
// remains under the limit, none when that is less than one worst case). When a call ends, what
// it did not cost returns to the remainder; what it cost stays held until a ledger batch records
// it, and is given back in that batch's own statement, so the counter never shows less than has
// been spent, nor a cost twice. A remainder goes back to the counter when its slice has been idle
// for `idleMs`, when the window or the limit changes, and at shutdown. With vendors that honour the
// cap, the spend of admitted calls therefore never exceeds the limit, at any concurrency and on
// any number of processes; a process that dies leaves its holds until the window ends.
import type { Database } from '../db/client.js';
import { counterKey, createReleaseQueue, type Release, type SpendCounter } from './spend-releases.js';
import { windowOf } from './windows.js';

export type { SpendCounter } from './spend-releases.js';

/** A counter with the limit (whole nanos) its holds are taken under. */
export interface LimitedCounter extends SpendCounter {
  limit: number;
}

/** This process's slice of one counter. */
interface Slice extends LimitedCounter {
  key: string;
  /** Nanos held in the counter for no call: the remainder later calls are admitted from. */
  free: number;
  /** The slice the next top-up asks for beyond the call's shortfall. */
  next: number;
  inFlight: number;
  /** Top-ups of this slice under way: while one is, the others take no further slice. */
  topping: number;
  usedAt: number;
  /** False once replaced (window or limit changed, idle, shutdown): what comes back goes to the counter. */
  current: boolean;
}

/** What one call got from each of its counters; hand it back to `keep` and then `settle`. */
export interface Taken {
  slices: readonly Slice[];
  /** Nanos the call got in each counter: at least `least`, or less when it did not fit. */
  held: number[];
  /** Where the call went to the database: the counter's spent plus held by calls, for the 402. */
  amounts: number[];
  least: number;
}

export interface SpendHoldsOptions {
  /** A slice unused this long gives its remainder back to the counter. */
  idleMs: number;
  onError: (error: unknown) => void;
  /** Milliseconds, for idleness: the quota clock (tests move it). Default Date.now. */
  now?: () => number;
}

const MAX_COUNTERS = 100_000;
// A slice grows to at most this many worst cases of the call that asks for it.
const MAX_SLICE_CALLS = 64;

const ROWS = `unnest($1::text[], $2::uuid[], $3::text[], $4::timestamptz[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[])
  as v(scope, subject_id, metric, window_start, lim, want, lo, slice, unit)`;
// What a counter at amount `a` grants: nothing unless `lo` fits; then the call's part (up to
// `want`) and a slice of at most a quarter of what remains after it, none below one worst case.
const granted = (a: string) => `(select case when ${a} + v.lo <= v.lim then n.need + case when (v.lim - ${a} - n.need) / 4 >= v.unit
    then least(v.slice, (v.lim - ${a} - n.need) / 4) else 0 end else 0 end from (select least(v.want, v.lim - ${a}) as need) n)`;
const HOLD_SQL = `insert into quota_windows as q (scope, subject_id, metric, window_start, amount, last_grant)
select v.scope, v.subject_id, v.metric, v.window_start, g.n, g.n from ${ROWS} cross join lateral (select ${granted('0::bigint')} as n) g
on conflict (scope, subject_id, metric, window_start) do update set (amount, last_grant) = (
  select q.amount + g.n, g.n from ${ROWS} cross join lateral (select ${granted('q.amount')} as n) g
  where v.scope = excluded.scope and v.subject_id = excluded.subject_id and v.metric = excluded.metric and v.window_start = excluded.window_start)
returning q.scope, q.subject_id, q.metric, q.amount, q.last_grant`;

export function createSpendHolds(database: Pick<Database, 'query'>, options: SpendHoldsOptions) {
  const { idleMs, onError } = options;
  const now = options.now ?? Date.now;
  const slices = new Map<string, Slice>();
  const releases = createReleaseQueue(database, onError);
  const { giveBack } = releases;
  /** Per counter: held for costs that finished calls have and the ledger has not yet recorded. */
  const costs = new Map<string, Release>();
  let sweeper: NodeJS.Timeout | null = null;
  let closed = false;

  /** Back to the slice's remainder, or to the counter once the slice is no longer current. */
  function toFree(slice: Slice, amount: number): void {
    if (slice.current) slice.free += amount;
    else giveBack(slice, amount);
  }

  function retire(slice: Slice): void {
    slice.current = false;
    slices.delete(slice.key);
    giveBack(slice, slice.free);
    slice.free = 0;
  }

  function sweep(): void {
    const at = now();
    for (const slice of slices.values()) if (slice.inFlight === 0 && at - slice.usedAt >= idleMs) retire(slice);
    if (slices.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = null;
    }
  }

  /** The process's current slice of the counter, a new one when its window or limit changed. */
  function sliceOf(c: LimitedCounter, at: number): Slice {
    const key = `${c.scope}:${c.id}:${c.metric}`;
    let slice = slices.get(key);
    if (slice && (slice.windowStart !== c.windowStart || slice.limit !== c.limit)) {
      // A call that read the clock before the window turned: no remainder for it, nothing kept.
      if (c.windowStart < slice.windowStart) return { ...fresh(c, key, at), current: false };
      retire(slice);
      slice = undefined;
    }
    if (!slice) {
      if (slices.size >= MAX_COUNTERS) for (const s of [...slices.values()]) retire(s);
      slice = fresh(c, key, at);
      if (!closed) slices.set(key, slice);
      else slice.current = false;
      if (!sweeper && !closed) {
        sweeper = setInterval(sweep, Math.max(5, idleMs / 2));
        sweeper.unref();
      }
    }
    slice.usedAt = at;
    return slice;
  }

  const fresh = (c: LimitedCounter, key: string, at: number): Slice => ({
    scope: c.scope, id: c.id, metric: c.metric, windowStart: c.windowStart, limit: c.limit, key, free: 0, next: 0, inFlight: 0, topping: 0, usedAt: at, current: true,
  });

  return {
    /**
     * Takes up to `want` nanos for one call from each counter (all of them at least `least`, or
     * the call does not fit): from this process's remainders, and for what they lack, from the
     * counters in one statement that also takes the next slice. Then `keep`, whether it fits or not.
     */
    async hold(counters: LimitedCounter[], want: number, least: number): Promise<Taken> {
      const at = now();
      const slices = counters.map((c) => sliceOf(c, at));
      const held = slices.map((s) => {
        const part = Math.min(s.free, want);
        s.free -= part;
        return part;
      });
      const amounts = held.map(() => 0);
      const short = slices.flatMap((s, i) => (held[i]! < want ? [i] : []));
      if (short.length === 0) return { slices, held, amounts, least };
      // Calls side by side share the first one's slice: a burst does not take one slice per call.
      const asked = short.map((i) => (slices[i]!.topping > 0 ? 0 : Math.max(slices[i]!.next, want)));
      for (const i of short) slices[i]!.topping += 1;
      try {
        await releases.caughtUp();
        const rows = await database.query<{ scope: string; subject_id: string; metric: string; amount: number | string; last_grant: number | string }>(
          HOLD_SQL,
          [
            short.map((i) => slices[i]!.scope),
            short.map((i) => slices[i]!.id),
            short.map((i) => slices[i]!.metric),
            short.map((i) => new Date(slices[i]!.windowStart).toISOString()),
            short.map((i) => slices[i]!.limit),
            short.map((i) => want - held[i]!),
            short.map((i) => Math.max(0, least - held[i]!)),
            asked,
            short.map(() => want),
          ],
          'quota_spend_hold',
        );
        short.forEach((i, k) => {
          const s = slices[i]!;
          const row = rows.find((r) => r.scope === s.scope && r.subject_id === s.id && r.metric === s.metric);
          const grant = Number(row?.last_grant ?? 0);
          const part = Math.min(grant, want - held[i]!);
          held[i]! += part;
          toFree(s, grant - part);
          if (asked[k]! > 0) s.next = Math.min(2 * asked[k]!, MAX_SLICE_CALLS * want);
          // Calls side by side may have left slices in the remainder meanwhile.
          const more = s.current ? Math.min(s.free, want - held[i]!) : 0;
          s.free -= more;
          held[i]! += more;
          amounts[i] = Math.max(0, Number(row?.amount ?? 0) - s.free - held[i]!);
        });
      } catch (error) {
        slices.forEach((s, i) => toFree(s, held[i]!));
        throw error;
      } finally {
        for (const i of short) slices[i]!.topping -= 1;
      }
      return { slices, held, amounts, least };
    },

    /**
     * After `hold`: the call keeps `kept` nanos of each counter (null: refused); the rest returns
     * to the remainders. A counter too full for the call gets this process's remainder back at
     * once, for other processes: near the limit, holds are taken call by call.
     */
    keep(taken: Taken, kept: number | null): void {
      taken.slices.forEach((s, i) => {
        toFree(s, taken.held[i]! - (kept ?? 0));
        if (kept !== null) s.inFlight += 1;
        else if (taken.held[i]! < taken.least && s.current) retire(s);
      });
    },

    /**
     * The call that kept `kept` nanos ended at `end` (the quota clock) having cost `cost`: the
     * rest returns to the remainders, the cost stays held until the ledger records it (`recorded`).
     * The ledger records it in the window the call ends in, so a hold of an earlier window goes back whole.
     */
    settle(taken: Taken, kept: number, cost: number, end: number): void {
      const at = now();
      for (const s of taken.slices) {
        s.inFlight -= 1;
        s.usedAt = at;
        if (windowOf(s.metric, end).start !== s.windowStart) {
          giveBack(s, kept);
          continue;
        }
        toFree(s, kept - cost);
        if (!(cost > 0)) continue;
        const key = counterKey(s);
        const held = costs.get(key);
        if (held) held.amount += cost;
        else {
          if (costs.size >= MAX_COUNTERS) costs.clear();
          costs.set(key, { scope: s.scope, id: s.id, metric: s.metric, windowStart: s.windowStart, amount: cost });
        }
      }
    },

    /**
     * A ledger batch is about to add `amount` to the counter: as much of the costs held there is
     * claimed for it (and returned), which its own statement takes off the counter. Costs are
     * recorded in the order calls end, and a call's cost is held before it is recorded, so what a
     * batch adds was held (except what calls cost beyond their hold).
     */
    claimCosts(counter: SpendCounter & { amount: number }): number {
      const key = counterKey(counter);
      const held = costs.get(key);
      if (!held || !(counter.amount > 0)) return 0;
      const claimed = Math.min(counter.amount, held.amount);
      held.amount -= claimed;
      if (held.amount <= 0) costs.delete(key);
      return claimed;
    },

    /** The batch that claimed `claimed` of the counter's costs was rolled back: they are held again. */
    unclaimCosts(counter: SpendCounter, claimed: number): void {
      if (!(claimed > 0)) return;
      const key = counterKey(counter);
      const held = costs.get(key);
      if (held) held.amount += claimed;
      else costs.set(key, { scope: counter.scope, id: counter.id, metric: counter.metric, windowStart: counter.windowStart, amount: claimed });
    },

    /** Resolves once every release queued so far is written (or has failed and is queued again). */
    written: releases.written,

    /** The remainders of slices idle for `idleMs` go back to their counters (a timer calls this too). */
    sweep,

    /** At shutdown, after the ledger's last batch: every hold still kept is given back. */
    async releaseAll(): Promise<void> {
      closed = true;
      if (sweeper) clearInterval(sweeper);
      sweeper = null;
      for (const slice of [...slices.values()]) retire(slice);
      for (const cost of costs.values()) giveBack(cost, cost.amount);
      costs.clear();
      await releases.drain();
    },
  };
}

export type SpendHolds = ReturnType<typeof createSpendHolds>;
