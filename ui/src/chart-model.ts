// The numbers behind the Usage page's charts, apart from the DOM: which days a range shows,
// how report rows become stacked series, and where an axis tops out.

/** A row of GET /v1/usage, with `subgroup` when asked with then_by. */
export interface UsageRow {
  group: string | null;
  subgroup?: string | null;
  requests: number;
  total_tokens: number;
  cost_usd: number;
}

export interface Series {
  name: string;
  values: number[];
}

/** Series with their own colour; the rest are summed as "others". */
const MAX_SERIES = 7;
const DAY_MS = 86_400_000;

/** The UTC days from `days - 1` days ago to today, as YYYY-MM-DD. */
export function lastDays(days: number, now = Date.now()): string[] {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}

/** Rows of day × name into chart series, largest first, the smallest summed as "N others". */
export function toSeries(rows: UsageRow[], days: string[], value: (row: UsageRow) => number, nameOf: (subgroup: string | null) => string): Series[] {
  const byName = new Map<string, number[]>();
  const index = new Map(days.map((d, i) => [d, i]));
  for (const row of rows) {
    const at = index.get(row.group ?? '');
    if (at === undefined) continue;
    const name = nameOf(row.subgroup ?? null);
    const values = byName.get(name) ?? byName.set(name, days.map(() => 0)).get(name)!;
    values[at]! += value(row);
  }
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const all = [...byName].map(([name, values]) => ({ name, values })).filter((s) => sum(s.values) > 0).sort((a, b) => sum(b.values) - sum(a.values) || a.name.localeCompare(b.name));
  if (all.length <= MAX_SERIES + 1) return all;
  const rest = all.slice(MAX_SERIES);
  return [...all.slice(0, MAX_SERIES), { name: `${rest.length} others`, values: days.map((_, i) => rest.reduce((a, s) => a + s.values[i]!, 0)) }];
}

/** 1, 2 or 5 times a power of ten, at least `value`: axis ticks people read at a glance. */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

