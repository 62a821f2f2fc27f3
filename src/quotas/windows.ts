// UTC windows of the limits: the minute for rates, the day and the month for spend.
import type { QuotaMetric } from '../db/schema.js';

/** Milliseconds since the epoch; injectable so tests can cross window boundaries at will. */
export type Clock = () => number;

export interface Window {
  start: number;
  end: number;
}

export function windowOf(metric: QuotaMetric, now: number): Window {
  if (metric === 'requests' || metric === 'tokens') {
    const start = Math.floor(now / 60_000) * 60_000;
    return { start, end: start + 60_000 };
  }
  const d = new Date(now);
  if (metric === 'usd_day') {
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    return { start, end: start + 86_400_000 };
  }
  return { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

/** OpenAI's reset format: `12ms`, `1s`, `59.5s`, `6m0s`, `1h2m3s`. */
export function formatReset(ms: number): string {
  const rounded = Math.max(0, Math.ceil(ms));
  if (rounded < 1000) return `${rounded}ms`;
  const hours = Math.floor(rounded / 3_600_000);
  const minutes = Math.floor((rounded % 3_600_000) / 60_000);
  const seconds = Number(((rounded % 60_000) / 1000).toFixed(3));
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}
