// What a ledger batch adds to the spend counters: one delta per scope, id, metric and UTC
// window, summed over the batch's rows, in the order the rows first charge them.
import { describe, expect, it } from 'vitest';
import type { UsageEntry } from '../../src/usage/entry.js';
import { spendDeltas } from '../../src/usage/spend-deltas.js';

const DAY = Date.UTC(2026, 0, 31);
const NEXT_DAY = Date.UTC(2026, 1, 1);

function row(accountId: string, apiKeyId: string | null, costNanos: number, at: number): UsageEntry {
  const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
  return { at, accountId, apiKeyId, provider: 'openai', model: 'gpt-4o-mini', ladder: null, instanceId: null, usage, costNanos, outcome: 'ok' };
}

describe('spendDeltas', () => {
  it('sums each counter over the batch, account before key, day before month, in the order first charged', () => {
    const deltas = spendDeltas([row('a1', 'k1', 10, DAY + 5), row('a2', null, 7, DAY), row('a1', 'k1', 5, DAY + 60_000)]);
    expect(deltas.list).toEqual([
      { scope: 'account', id: 'a1', metric: 'usd_day', windowStart: DAY, amount: 15 },
      { scope: 'account', id: 'a1', metric: 'usd_month', windowStart: Date.UTC(2026, 0, 1), amount: 15 },
      { scope: 'api_key', id: 'k1', metric: 'usd_day', windowStart: DAY, amount: 15 },
      { scope: 'api_key', id: 'k1', metric: 'usd_month', windowStart: Date.UTC(2026, 0, 1), amount: 15 },
      { scope: 'account', id: 'a2', metric: 'usd_day', windowStart: DAY, amount: 7 },
      { scope: 'account', id: 'a2', metric: 'usd_month', windowStart: Date.UTC(2026, 0, 1), amount: 7 },
    ]);
  });

  it('keeps a batch that crosses midnight at the month end apart by window', () => {
    const deltas = spendDeltas([row('a1', null, 3, DAY), row('a1', null, 4, NEXT_DAY)]);
    expect(deltas.list.map((d) => [d.metric, d.windowStart, d.amount])).toEqual([
      ['usd_day', DAY, 3],
      ['usd_month', Date.UTC(2026, 0, 1), 3],
      ['usd_day', NEXT_DAY, 4],
      ['usd_month', NEXT_DAY, 4],
    ]);
    expect(deltas.amountOf('account', 'a1', 'usd_day', NEXT_DAY)).toBe(4);
    expect(deltas.amountOf('account', 'a1', 'usd_month', Date.UTC(2026, 0, 1))).toBe(3);
  });

  it('puts rows out of time order back in their own windows, to the last millisecond of a day', () => {
    const deltas = spendDeltas([row('a1', null, 1, DAY), row('a1', null, 2, NEXT_DAY), row('a1', null, 4, NEXT_DAY - 1), row('a1', null, 8, NEXT_DAY + 86_399_999)]);
    expect(deltas.list.map((d) => [d.metric, d.windowStart, d.amount])).toEqual([
      ['usd_day', DAY, 5],
      ['usd_month', Date.UTC(2026, 0, 1), 5],
      ['usd_day', NEXT_DAY, 10],
      ['usd_month', NEXT_DAY, 10],
    ]);
  });

  it('charges nothing for calls that cost nothing, and says 0 for a counter it did not touch', () => {
    const deltas = spendDeltas([row('a1', 'k1', 0, DAY), row('a1', 'k1', -1, DAY)]);
    expect(deltas.list).toEqual([]);
    expect(deltas.amountOf('account', 'a1', 'usd_day', DAY)).toBe(0);
    // The same id under the other scope is another counter.
    expect(spendDeltas([row('x', null, 2, DAY)]).amountOf('api_key', 'x', 'usd_day', DAY)).toBe(0);
  });
});
