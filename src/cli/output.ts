// Human-readable output: listings as aligned columns, single records as `key: value` lines.
import { formatUsd, nanosOf } from '../money.js';
import type { Listing } from './command.js';

// Dollar fields (spend_usd, cost_usd, usd_per_day...) print as `$0.000064`, never as 6.4e-8.
const MONEY = /(^|_)usd(_|$)/;

const cell = (value: unknown, key = ''): string =>
  value === null || value === undefined
    ? '-'
    : typeof value === 'number' && MONEY.test(key)
      ? formatUsd(nanosOf(value))
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);

export function render(result: object | Listing): string {
  if ('data' in result && Array.isArray(result.data) && 'columns' in result) return table(result.data, result.columns);
  return Object.entries(result).map(([key, value]) => `${key}: ${cell(value, key)}`).join('\n');
}

function table(rows: object[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((c) => cell((row as Record<string, unknown>)[c], c)));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n');
}
