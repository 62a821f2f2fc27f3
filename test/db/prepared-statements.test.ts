// Named (prepared) statements: the hot writes of runs go through them, so they must give the
// same rows and errors as unnamed ones, on the embedded database (our own protocol path,
// src/db/pglite-prepared.ts, which runs unnamed texts prepared too) and on PostgreSQL.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { openTestDatabase } from '../helpers/database.js';

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

const TYPED = `select $1::uuid[] as ids, $2::int + 1 as next, $3::text::jsonb as doc, $4::float8 as price, $5::text as note,
  timestamptz '2026-01-02T03:04:05Z' as at, $6::int is null as missing`;

describe('a named statement', () => {
  it('gives the rows an unnamed one gives, parameters and results typed the same, every time it runs', async () => {
    const params = [['5f0c6a5e-4c1a-4a57-9a0e-2a6d5b1c0e11', '0b8f4a57-9d3e-4c1e-8b5a-7f2e1d6c3b22'], 41, '{"a":[1,"x"]}', 0.125, 'it\'s', null];
    const unnamed = await database.query(TYPED, params);
    for (let i = 0; i < 3; i++) expect(await database.query(TYPED, params, 'test_typed')).toEqual(unnamed);
    expect(unnamed).toEqual([
      {
        ids: ['5f0c6a5e-4c1a-4a57-9a0e-2a6d5b1c0e11', '0b8f4a57-9d3e-4c1e-8b5a-7f2e1d6c3b22'],
        next: 42,
        doc: { a: [1, 'x'] },
        price: 0.125,
        note: "it's",
        at: new Date('2026-01-02T03:04:05Z'),
        missing: true,
      },
    ]);
    expect(await database.queryRelaxed('test_typed_relaxed', TYPED, params)).toEqual(unnamed);
  });

  it('fails with the database error, and leaves the connection usable', async () => {
    const failing = 'select 1 / $1::int as q';
    expect(await database.query(failing, [2], 'test_divide')).toEqual([{ q: 0 }]);
    await expect(database.query(failing, [0], 'test_divide')).rejects.toThrow('division by zero');
    await expect(database.query(failing, [0], 'test_divide')).rejects.toMatchObject({ code: '22012' });
    await expect(database.queryRelaxed('test_bad_syntax', 'selec 1', [])).rejects.toThrow(/syntax error/);
    expect(await database.query(failing, [1], 'test_divide')).toEqual([{ q: 1 }]);
    // A parameter no serializer can write fails before anything is sent, and spoils nothing after it.
    const at = 'select $1::timestamptz as at';
    await expect(database.query(at, [new Date(Number.NaN)], 'test_unwritable')).rejects.toThrow(/invalid/i);
    expect(await database.query(at, [new Date('2026-01-02T03:04:05Z')], 'test_unwritable')).toEqual([{ at: new Date('2026-01-02T03:04:05Z') }]);
    expect(await database.query('select 2 as two')).toEqual([{ two: 2 }]);
  });

  it('carries a parameter and a row of megabytes, and a small statement after them', async () => {
    const large = 'ü€'.repeat(700_000); // 3.5 MB of UTF-8
    const [row] = await database.query<{ n: number; echo: string }>('select octet_length($1::text) as n, $1::text as echo', [large], 'test_large');
    expect(row!.n).toBe(3_500_000);
    expect(row!.echo === large).toBe(true);
    expect(await database.query('select $1::int + 1 as next', [1], 'test_small_after')).toEqual([{ next: 2 }]);
  });

  it('writes what it writes, and a statement without rows gives none', async () => {
    const [account] = await database.query<{ id: string }>(`insert into accounts (username) values ($1) returning id`, ['prepared-writer'], 'test_insert');
    expect(await database.query(`update accounts set username = $2 where id = $1`, [account!.id, 'prepared-renamed'], 'test_update')).toEqual([]);
    expect(await database.query(`select username from accounts where id = $1`, [account!.id])).toEqual([{ username: 'prepared-renamed' }]);
  });

  it('delivers the notifications it commits to the listeners of their channel', async () => {
    const payloads: string[] = [];
    const stop = await database.listen('test_prepared_notices', (payload) => payloads.push(payload));
    try {
      await database.query(`select pg_notify('test_prepared_notices', $1), pg_notify('test_prepared_elsewhere', $1)`, ['first'], 'test_notify');
      await database.queryRelaxed('test_notify_relaxed', `select pg_notify('test_prepared_notices', $1)`, ['second']);
      await expect.poll(() => payloads).toEqual(['first', 'second']);
    } finally {
      await stop();
    }
  });

  it('sent while a transaction is open on the embedded database, runs after it ends, never inside it', async () => {
    if (database.kind !== 'pglite') return; // PostgreSQL runs it on another connection
    const username = 'prepared-after-rollback';
    let count: Promise<{ n: number }[]> | undefined;
    await expect(
      database.db.transaction(async (tx) => {
        await tx.execute(sql`insert into accounts (username) values (${username})`);
        count = database.query<{ n: number }>('select count(*)::int as n from accounts where username = $1', [username], 'test_count_after');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await count).toEqual([{ n: 0 }]);
  });
});

describe('an unnamed statement', () => {
  it('reports the rows a write affected, as drizzle reads them', async () => {
    await database.query(`insert into accounts (username) values ('affected-a'), ('affected-b')`);
    const result = (await database.db.execute(sql`update accounts set username = username || '-x' where username like 'affected-%'`)) as { affectedRows?: number; rowCount?: number };
    expect(database.kind === 'pglite' ? result.affectedRows : result.rowCount).toBe(2);
  });

  it('sent twice side by side in a transaction, is prepared once on the embedded database', async () => {
    if (database.kind !== 'pglite') return; // PostgreSQL's driver prepares no unnamed statement
    const text = `select $1::int + 7 as v -- side by side`;
    const answers = await database.db.transaction(async (tx) =>
      Promise.all([tx.execute(sql.raw(text.replace('$1', '1'))), tx.execute(sql.raw(text.replace('$1', '1')))]),
    );
    expect(answers.map((a) => (a as unknown as { rows: unknown[] }).rows)).toEqual([[{ v: 8 }], [{ v: 8 }]]);
    expect(await database.query(`select count(*)::int as n from pg_prepared_statements where statement = $1`, [text.replace('$1', '1')])).toEqual([{ n: 1 }]);
  });

  it('runs right after more distinct texts than the embedded database keeps prepared (256)', async () => {
    for (let i = 0; i < 300; i++) expect(await database.query(`select ${i} as n`)).toEqual([{ n: i }]);
    expect(await database.query('select 0 as n')).toEqual([{ n: 0 }]);
    expect(await database.query('select 299 as n')).toEqual([{ n: 299 }]);
  });
});
