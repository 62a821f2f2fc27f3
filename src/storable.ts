// Numbers that reach the database from outside (a vendor's token counts, the cost computed from
// them) made storable, as src/unicode.ts does for text: whatever a vendor reports, the write
// that records it cannot fail. Token columns are 32-bit integers; costs are bigint nanos.

/**
 * The largest token count one call is recorded with. No model reads or writes a billion tokens
 * in one call; the cap keeps prompt + completion within a 32-bit column.
 */
export const MAX_TOKEN_COUNT = 1_000_000_000;

/** A token count: a whole number from 0 to MAX_TOKEN_COUNT; anything that is not a number is 0. */
export function storableCount(value: unknown): number {
  if (typeof value !== 'number' || !(value > 0)) return 0; // also NaN
  return value >= MAX_TOKEN_COUNT ? MAX_TOKEN_COUNT : Math.trunc(value);
}

/** An amount of money in nanos (src/money.ts): a whole number from 0 to MAX_SAFE_INTEGER, else 0 or the cap. */
export function storableAmount(value: number): number {
  if (!(value > 0)) return 0; // also NaN
  return value >= Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : Math.round(value);
}
