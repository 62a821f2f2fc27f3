// Array parameters go to the embedded database in PostgreSQL's binary format where every element
// has one (src/db/pglite-binary-arrays.ts), as text otherwise. Either way a statement stores and
// refuses exactly what it did with text: checked here on both databases (PostgreSQL is sent text).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBinaryArray } from '../../src/db/pglite-binary-arrays.js';
import { Bytes } from '../../src/db/pglite-bytes.js';
import type { Database } from '../../src/db/client.js';
import { openTestDatabase } from '../helpers/database.js';

const INT4_ARRAY = 1007, INT8_ARRAY = 1016, FLOAT8_ARRAY = 1022, UUID_ARRAY = 2951, TEXT_ARRAY = 1009, BOOL_ARRAY = 1000;
const DATE_ARRAY = 1182;

function written(type: number, value: unknown): number[] | false {
  const into = new Bytes();
  into.byte(0xff); // something before it, kept as it is
  const wrote = writeBinaryArray(into, type, value);
  if (!wrote) {
    expect(into.length).toBe(1);
    return false;
  }
  return [...into.filled().subarray(1)];
}

const int32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];

describe('the binary form of an array parameter', () => {
  it('is the length, the dimension, the null flag, the element type, the bounds and each element', () => {
    expect(written(INT4_ARRAY, [1, null, -2])).toEqual([
      ...int32(40), // what follows
      ...int32(1), // one dimension
      ...int32(1), // it holds a null
      ...int32(23), // int4
      ...int32(3), // three elements
      ...int32(1), // from index 1
      ...int32(4), ...int32(1),
      ...int32(-1),
      ...int32(4), ...int32(-2),
    ]);
    expect(written(UUID_ARRAY, ['0B8F4A57-9d3e-4c1e-8b5a-7f2e1d6c3b22'])).toEqual([
      ...int32(40), ...int32(1), ...int32(0), ...int32(2950), ...int32(1), ...int32(1),
      ...int32(16), 0x0b, 0x8f, 0x4a, 0x57, 0x9d, 0x3e, 0x4c, 0x1e, 0x8b, 0x5a, 0x7f, 0x2e, 0x1d, 0x6c, 0x3b, 0x22,
    ]);
    expect(written(INT8_ARRAY, [-4294967297])).toEqual([
      ...int32(32), ...int32(1), ...int32(0), ...int32(20), ...int32(1), ...int32(1),
      ...int32(8), ...int32(-2), ...int32(-1), // -2^32 - 1: high word -2, low word 0xffffffff
    ]);
    expect(written(TEXT_ARRAY, [])).toEqual([...int32(12), ...int32(0), ...int32(0), ...int32(25)]);
  });

  it('is not written for a type without one here, or an element that has no single binary form', () => {
    expect(written(DATE_ARRAY, ['2026-01-01'])).toBe(false);
    expect(written(INT4_ARRAY, 'not an array')).toBe(false);
    for (const value of [[1.5], [2 ** 31], [-(2 ** 31) - 1], ['7'], [[1, 2]]]) expect(written(INT4_ARRAY, value)).toBe(false);
    for (const value of [[2 ** 53], [0.5], [2n ** 63n], ['7']]) expect(written(INT8_ARRAY, value)).toBe(false);
    expect(written(FLOAT8_ARRAY, ['0.5'])).toBe(false);
    expect(written(BOOL_ARRAY, [1])).toBe(false);
    expect(written(TEXT_ARRAY, ['a', 7])).toBe(false);
    // Forms the engine's text input takes: braces, no hyphens, a space; and not hex at all.
    for (const id of ['{0b8f4a57-9d3e-4c1e-8b5a-7f2e1d6c3b22}', '0b8f4a579d3e4c1e8b5a7f2e1d6c3b22', '0b8f4a57-9d3e-4c1e-8b5a-7f2e1d6c3b2 ', '0b8f4a57-9d3e-4c1e-8b5a-7f2e1d6c3bzz'])
      expect(written(UUID_ARRAY, ['5f0c6a5e-4c1a-4a57-9a0e-2a6d5b1c0e11', id])).toBe(false);
  });
});

describe('an array parameter', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  const asText = async (type: string, value: unknown) =>
    (await database.query<{ a: string[] | null }>(`select $1::${type}[]::text[] as a`, [value]))[0]!.a;

  it('stores each element, nulls and the edges of its type included', async () => {
    expect(await asText('int', [0, 1, -1, 2147483647, -2147483648, null])).toEqual(['0', '1', '-1', '2147483647', '-2147483648', null]);
    expect(await asText('bigint', [0, -1, 2 ** 53 - 1, -(2 ** 53 - 1), 4294967296, -4294967297, 9223372036854775807n, -9223372036854775808n, null])).toEqual([
      '0', '-1', '9007199254740991', '-9007199254740991', '4294967296', '-4294967297', '9223372036854775807', '-9223372036854775808', null,
    ]);
    expect(await asText('float8', [0.125, -0, 1e-300, Number.MAX_VALUE, Number.NaN, Infinity, -Infinity, null])).toEqual([
      '0.125', '0', '1e-300', '1.7976931348623157e+308', 'NaN', 'Infinity', '-Infinity', null,
    ]);
    expect(await asText('uuid', ['0B8F4A57-9D3E-4C1E-8B5A-7F2E1D6C3B22', null, '5f0c6a5e-4c1a-4a57-9a0e-2a6d5b1c0e11'])).toEqual([
      '0b8f4a57-9d3e-4c1e-8b5a-7f2e1d6c3b22', null, '5f0c6a5e-4c1a-4a57-9a0e-2a6d5b1c0e11',
    ]);
    const texts = ['', 'NULL', 'a,b', '{x}', '"q"', 'back\\slash', 'ünï€😀', ' padded ', null];
    expect(await asText('text', texts)).toEqual(texts);
    expect(await asText('bool', [true, false, null])).toEqual(['true', 'false', null]);
  });

  it('may be empty, and is then an array of no dimension', async () => {
    const [row] = await database.query<{ n: number; same: boolean }>(`select cardinality($1::uuid[]) as n, $2::int[] = '{}'::int[] as same`, [[], []]);
    expect(row).toEqual({ n: 0, same: true });
  });

  it('is read in order by unnest, as the usage ledger reads its columns', async () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);
    const rows = await database.query<{ id: string; n: number }>(
      'select u.id::text as id, u.n::int as n from unnest($1::uuid[], $2::bigint[]) with ordinality as u(id, after, n) where u.after = u.n * 1000',
      [ids, ids.map((_, i) => (i + 1) * 1000)],
    );
    expect(rows.map((r) => r.id)).toEqual(ids);
  });

  it('that has no binary form is taken, or refused, as text always was', async () => {
    expect(await asText('uuid', ['{0b8f4a57-9d3e-4c1e-8b5a-7f2e1d6c3b22}', '0b8f4a579d3e4c1e8b5a7f2e1d6c3b22'])).toEqual([
      '0b8f4a57-9d3e-4c1e-8b5a-7f2e1d6c3b22', '0b8f4a57-9d3e-4c1e-8b5a-7f2e1d6c3b22',
    ]);
    expect(await asText('bigint', ['12', 3])).toEqual(['12', '3']);
    const [nested] = await database.query<{ a: string }>('select $1::int[]::text as a', [[[1, 2], [3, 4]]]);
    expect(nested!.a).toBe('{{1,2},{3,4}}');
    await expect(asText('int', [1, 1.5])).rejects.toMatchObject({ code: '22P02' });
    await expect(asText('int', [2 ** 31])).rejects.toMatchObject({ code: '22003' });
    await expect(asText('uuid', ['not-a-uuid'])).rejects.toMatchObject({ code: '22P02' });
  });

  it('holding a NUL character is refused in either form, and the connection stays usable', async () => {
    await expect(asText('text', ['fine', 'nul\u0000inside'])).rejects.toMatchObject({ code: '22021' });
    expect(await asText('text', ['after'])).toEqual(['after']);
  });
});
