// How numbers, times and money are shown. Pure functions, shared by every page.

export function duration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return minutes < 60 ? `${minutes} min ${seconds} s` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The API's dollars (exact decimals of whole nano-dollars) as whole nanos, so that sums of them stay exact. */
export const nanos = (usdValue: number): number => Math.round(usdValue * 1e9);

/**
 * Dollars as the CLI prints them (src/money.ts, formatUsd): six decimals rounded half up
 * (`$0.000064`), or every nano of an amount below $0.000001 (`$0.000000064`); never an exponent.
 */
export function usd(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  const abs = Math.abs(nanos(value));
  const sign = value < 0 ? '-' : '';
  if (abs > 0 && abs < 1000) return `${sign}$0.${String(abs).padStart(9, '0').replace(/0+$/, '')}`;
  const micros = Math.round(abs / 1000);
  return `${sign}$${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, '0')}`;
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : value.toLocaleString('en-US');
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '–' : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** The day alone, for tables where the time of day does not matter (an expiry, a creation). */
export function date(iso: string | null | undefined): string {
  if (!iso) return '–';
  const value = new Date(iso);
  return Number.isNaN(value.getTime()) ? '–' : value.toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/** Offsets on a timeline axis: `+1.5 s`. */
export function offset(ms: number): string {
  return ms === 0 ? '0' : `+${duration(ms)}`;
}
