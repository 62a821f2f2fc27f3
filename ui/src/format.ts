// How numbers, times and money are shown. Pure functions, shared by every page.

export function duration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return minutes < 60 ? `${minutes} min ${seconds} s` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function usd(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  if (value === 0) return '$0';
  if (value < 0.01) return `$${value.toFixed(value < 0.0001 ? 6 : 4)}`;
  return `$${value.toFixed(2)}`;
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
