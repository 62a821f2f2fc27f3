// Money inside the service is an integer number of nano-dollars (1e-9 USD): a call's cost is
// rounded once, from the price table, and every sum after that is an integer sum, exact in
// JavaScript up to Number.MAX_SAFE_INTEGER nanos (about $9M) and in SQL bigint beyond. Micro-dollars
// would round a one-token call at $0.15 per million tokens to nothing. Dollars appear only at
// the edges: the API's JSON numbers, the CLI's and the web UI's text, the prices and limits typed in.
import { invalidRequest } from './errors.js';

export const NANOS_PER_USD = 1_000_000_000;

/**
 * Nanos as a JSON number of dollars: the exact decimal with at most 9 decimals (64350 nanos is
 * 0.00006435). Integer division by a power of ten rounds to the nearest double, whose shortest
 * form is that decimal for every amount below $1,000,000 (15 significant digits; above, a double
 * may drop the last nano). JSON.stringify writes amounts below $0.000001 with an exponent
 * (6.4e-8), which is the same exact number.
 */
export const nanosToUsd = (nanos: number): number => nanos / NANOS_PER_USD;

/** Dollars already validated (at most 9 decimals) as nanos: the multiplication's float error is far below one nano. */
export const nanosOf = (usd: number): number => Math.round(usd * NANOS_PER_USD);

/**
 * True when `usd` is a whole number of nanos: at most 9 decimals, give or take the float error
 * of the client's own arithmetic (0.1 + 0.2 is 0.30000000000000004, and is $0.3).
 */
function wholeNanos(usd: number): boolean {
  const nanos = usd * NANOS_PER_USD;
  const whole = Math.round(nanos);
  return Number.isSafeInteger(whole) && Math.abs(nanos - whole) < 1e-3;
}

/**
 * Dollars typed in (a limit, a budget) as nanos; `param` names the field in the 400 that a
 * negative, non-finite amount or one with more than 9 decimals gets.
 */
export function usdToNanos(usd: number, param: string): number {
  if (!Number.isFinite(usd) || usd < 0) throw invalidRequest('invalid_value', `${param} must be a number of USD, 0 or more, got ${String(usd)}.`, param);
  if (!wholeNanos(usd)) throw invalidRequest('invalid_value', `${param} must have at most 9 decimals (whole nano-dollars), got ${String(usd)}.`, param);
  return nanosOf(usd);
}

/** Whether a dollar amount has at most 9 decimals: for validators that collect problems rather than throw. */
export const isWholeNanos = (usd: number): boolean => Number.isFinite(usd) && wholeNanos(usd);

/**
 * Nanos as text for people (CLI, web UI, messages): six decimals, rounded half up (`$0.000064`),
 * or, for an amount below $0.000001, the nanos themselves (`$0.000000064`). Never an exponent.
 */
export function formatUsd(nanos: number): string {
  const sign = nanos < 0 ? '-' : '';
  const abs = Math.abs(Math.round(nanos));
  if (abs > 0 && abs < 1000) return `${sign}$0.${String(abs).padStart(9, '0').replace(/0+$/, '')}`;
  const micros = Math.round(abs / 1000);
  return `${sign}$${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, '0')}`;
}

/** Nanos as an exact decimal string with all 9 decimals (`0.000064350`), for headers and CSV-like text. */
export function usdDecimal(nanos: number): string {
  const abs = Math.abs(Math.round(nanos));
  return `${nanos < 0 ? '-' : ''}${Math.floor(abs / NANOS_PER_USD)}.${String(abs % NANOS_PER_USD).padStart(9, '0')}`;
}
