// The Usage page's arithmetic: which days a range shows, how report rows become chart series,
// and the axis' round top.
import { describe, expect, it } from 'vitest';
import { lastDays, niceCeiling, toSeries } from '../../ui/src/chart-model.js';

const row = (group: string, subgroup: string | null, total_tokens: number) => ({ group, subgroup, requests: 1, total_tokens, cost_usd: total_tokens / 1e6 });

describe('usage page model', () => {
  it('the last N UTC days end today, oldest first', () => {
    expect(lastDays(3, Date.parse('2026-03-01T23:30:00Z'))).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
    expect(lastDays(7, Date.parse('2026-01-03T00:00:00Z'))[0]).toBe('2025-12-28');
  });

  it('series are the largest first, with a zero on days without calls; rows outside the range are ignored', () => {
    const days = ['2026-07-01', '2026-07-02', '2026-07-03'];
    const series = toSeries(
      [row('2026-07-01', 'gpt-4o', 10), row('2026-07-03', 'gpt-4o', 5), row('2026-07-02', 'mini', 40), row('2026-06-30', 'old', 99), row('2026-07-02', null, 0)],
      days, (r) => r.total_tokens, (s) => s ?? 'none',
    );
    expect(series).toEqual([{ name: 'mini', values: [0, 40, 0] }, { name: 'gpt-4o', values: [10, 0, 5] }]);
  });

  it('past eight names, the smallest are summed as "others"', () => {
    const days = ['2026-07-01'];
    const rows = Array.from({ length: 10 }, (_, i) => row('2026-07-01', `m${i}`, 100 - i));
    const series = toSeries(rows, days, (r) => r.total_tokens, (s) => s!);
    expect(series.map((s) => s.name)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', '3 others']);
    expect(series.at(-1)!.values).toEqual([93 + 92 + 91]);
  });

  it('the axis tops at 1, 2 or 5 times a power of ten', () => {
    expect([0, 0.0032, 0.07, 0.1, 0.11, 3, 7, 12_345].map(niceCeiling)).toEqual([1, 0.005, 0.1, 0.1, 0.2, 5, 10, 20_000]);
  });
});
