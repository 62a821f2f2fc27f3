// src/money.ts: nanos are the unit; dollars are rendered from them by one function each way.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import { formatUsd, isWholeNanos, nanosToUsd, usdDecimal, usdToNanos } from '../src/money.js';

describe('money', () => {
  it('renders nanos as the exact decimal dollar amount: the JSON number has no float noise', () => {
    expect(JSON.stringify(nanosToUsd(64_350))).toBe('0.00006435');
    expect(JSON.stringify(nanosToUsd(1_600_000_000))).toBe('1.6');
    // Every amount below $1,000,000 (15 significant digits) comes out exact; above, a double may drop the last nano.
    expect(JSON.stringify(nanosToUsd(999_999_999_999_999))).toBe('999999.999999999');
    // Below $0.000001 JSON.stringify writes an exponent: the same exact number.
    expect(JSON.stringify(nanosToUsd(64))).toBe('6.4e-8');
    // The sum of rendered amounts, taken as nanos, is the rendered sum: no drift over many values.
    const parts = Array.from({ length: 10_000 }, (_, i) => (i * 7919) % 1_000_003);
    const total = parts.reduce((a, b) => a + b, 0);
    expect(parts.reduce((acc, n) => acc + usdToNanos(nanosToUsd(n), 'x'), 0)).toBe(total);
  });

  it('takes dollars in as nanos, refusing negatives, non-numbers and more than 9 decimals with a 400 naming the field', () => {
    expect(usdToNanos(2.5, 'usd_per_day')).toBe(2_500_000_000);
    expect(usdToNanos(0.000000001, 'usd_per_day')).toBe(1);
    expect(usdToNanos(0.1 + 0.2, 'usd_per_day')).toBe(300_000_000); // 0.30000000000000004: a client's float noise, not a tenth decimal
    for (const [value, message] of [
      [-1, 'usd_per_day must be a number of USD, 0 or more, got -1.'],
      [Number.NaN, 'usd_per_day must be a number of USD, 0 or more, got NaN.'],
      [Number.POSITIVE_INFINITY, 'usd_per_day must be a number of USD, 0 or more, got Infinity.'],
      [0.0000000001, 'usd_per_day must have at most 9 decimals (whole nano-dollars), got 1e-10.'],
      [1.0000000005, 'usd_per_day must have at most 9 decimals (whole nano-dollars), got 1.0000000005.'],
    ] as const) {
      const error = (() => {
        try {
          usdToNanos(value, 'usd_per_day');
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).toBody().error).toEqual({ message, type: 'invalid_request_error', code: 'invalid_value', param: 'usd_per_day' });
    }
    expect(isWholeNanos(0.0375)).toBe(true);
    expect(isWholeNanos(0.0000000375)).toBe(false);
  });

  it('prints six decimals for people, or every nano below $0.000001; never an exponent', () => {
    expect(formatUsd(64_350)).toBe('$0.000064');
    expect(formatUsd(64_500)).toBe('$0.000065'); // half up
    expect(formatUsd(0)).toBe('$0.000000');
    expect(formatUsd(64)).toBe('$0.000000064');
    expect(formatUsd(1)).toBe('$0.000000001');
    expect(formatUsd(999)).toBe('$0.000000999');
    expect(formatUsd(1_600_000_000)).toBe('$1.600000');
    expect(formatUsd(9_000_000_000_000_000)).toBe('$9000000.000000');
    expect(usdDecimal(64_350)).toBe('0.000064350');
    expect(usdDecimal(2_000_000_000)).toBe('2.000000000');
  });
});
