// Array parameters in PostgreSQL's binary format, for the embedded database's statements
// (src/db/pglite-wire.ts). As text, `{…}` is parsed by the engine compiled to WebAssembly, element
// by element through each type's input function; in binary, `array_recv` reads each element's
// bytes: `unnest` of 5,000 `uuid`s 8.1 ms as text, 1.8 ms in binary, and a usage ledger batch
// 11-14% fewer instructions (docs/performance.md). Only one-dimensional arrays whose every
// element has exactly one binary form are sent this way; anything else (a number that is not a
// whole int4, a uuid written with braces, a nested array) goes as text, so the engine accepts or
// refuses it as it always has.
import type { Bytes } from './pglite-bytes.js';

type ElementWriter = (into: Bytes, value: unknown) => boolean;

const TWO_TO_32 = 2 ** 32;
const INT8_MIN = -(2n ** 63n), INT8_END = 2n ** 63n;

const int4: ElementWriter = (into, value) => {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff) return false;
  into.int32(4);
  into.int32(value);
  return true;
};

const int8: ElementWriter = (into, value) => {
  if (typeof value === 'bigint') {
    if (value < INT8_MIN || value >= INT8_END) return false;
    into.int32(8);
    into.ensure(8);
    into.view.setBigInt64(into.length, value);
    into.length += 8;
    return true;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) return false;
  // A safe integer's high and low words, without a BigInt per element.
  const high = Math.floor(value / TWO_TO_32);
  into.int32(8);
  into.int32(high);
  into.ensure(4);
  into.view.setUint32(into.length, value - high * TWO_TO_32);
  into.length += 4;
  return true;
};

const float8: ElementWriter = (into, value) => {
  if (typeof value !== 'number') return false;
  into.int32(8);
  into.ensure(8);
  // -0 as 0, as its text is (`String(-0)`): both databases store the same value.
  into.view.setFloat64(into.length, value === 0 ? 0 : value);
  into.length += 8;
  return true;
};

const bool: ElementWriter = (into, value) => {
  if (typeof value !== 'boolean') return false;
  into.int32(1);
  into.byte(value ? 1 : 0);
  return true;
};

// The engine checks text received in binary as it checks text (a NUL or a bad sequence is refused).
const text: ElementWriter = (into, value) => {
  if (typeof value !== 'string') return false;
  into.text(value);
  return true;
};

/** Each hex digit's value, by character code; -1 for any other character. */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX['0123456789abcdef'.charCodeAt(i)] = i;
  HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
}
const hex = (code: number) => (code < 128 ? HEX[code]! : -1);

/** Only the canonical 8-4-4-4-12 form; the engine's text input takes others, which go as text. */
const uuid: ElementWriter = (into, value) => {
  if (typeof value !== 'string' || value.length !== 36) return false;
  const start = into.length;
  into.int32(16);
  into.ensure(16);
  for (let at = 0; at < 36; ) {
    if (at === 8 || at === 13 || at === 18 || at === 23) {
      if (value.charCodeAt(at) !== 0x2d) break;
      at++;
      continue;
    }
    const high = hex(value.charCodeAt(at));
    const low = hex(value.charCodeAt(at + 1));
    if (high < 0 || low < 0) break;
    into.bytes[into.length++] = (high << 4) | low;
    at += 2;
  }
  if (into.length === start + 20) return true;
  into.length = start;
  return false;
};

/** By array type id: its element type id and how one element is written. */
const ARRAYS = new Map<number, { element: number; write: ElementWriter }>([
  [1000, { element: 16, write: bool }],
  [1007, { element: 23, write: int4 }],
  [1009, { element: 25, write: text }],
  [1016, { element: 20, write: int8 }],
  [1022, { element: 701, write: float8 }],
  [2951, { element: 2950, write: uuid }],
]);

/**
 * Writes `value`, a parameter of type `type`, as a length-prefixed binary array, and says so;
 * writes nothing and answers false when the type or any element has no binary form here.
 */
export function writeBinaryArray(into: Bytes, type: number, value: unknown): boolean {
  // Most parameters are not arrays: they are told apart before the type is looked up.
  if (!Array.isArray(value)) return false;
  const array = ARRAYS.get(type);
  if (!array) return false;
  const start = into.length;
  into.int32(0); // the parameter's length, set below
  into.int32(value.length === 0 ? 0 : 1); // dimensions (an empty array has none)
  const nullsAt = into.length;
  into.int32(0);
  into.int32(array.element);
  if (value.length > 0) {
    into.int32(value.length);
    into.int32(1); // lower bound
  }
  let nulls = 0;
  for (const element of value) {
    if (element === null || element === undefined) {
      into.int32(-1);
      nulls = 1;
    } else if (!array.write(into, element)) {
      into.length = start;
      return false;
    }
  }
  into.view.setInt32(nullsAt, nulls);
  into.view.setInt32(start, into.length - start - 4);
  return true;
}
