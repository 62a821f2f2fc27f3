// The `Database` client's contract, which the embedded database keeps now that it runs on a
// thread of its own (src/db/pglite-thread.ts): transactions as one unit, database errors with
// their SQLSTATE and fields, notifications, and a closed database reported as unavailable.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { accounts } from '../../src/db/schema.js';
import { sqlState } from '../../src/db/errors.js';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';
import { openTestDatabase } from '../helpers/database.js';

const embedded = !process.env.TEST_DATABASE_URL;
let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

const usernames = async (prefix: string) =>
  (await database.query<{ username: string }>(`select username from accounts where username like $1 order by username`, [`${prefix}%`])).map((r) => r.username);

describe('a transaction', () => {
  it('commits all its statements together, and its result is the callback\'s', async () => {
    const result = await database.db.transaction(async (tx) => {
      await tx.insert(accounts).values({ username: 'tx-commit-a' });
      await tx.insert(accounts).values({ username: 'tx-commit-b' });
      return (await tx.select().from(accounts).where(eq(accounts.username, 'tx-commit-b'))).length;
    });
    expect(result).toBe(1);
    expect(await usernames('tx-commit-')).toEqual(['tx-commit-a', 'tx-commit-b']);
  });

  it('that throws writes nothing, and the caller gets its error', async () => {
    const failure = new Error('changed my mind');
    await expect(
      database.db.transaction(async (tx) => {
        await tx.insert(accounts).values({ username: 'tx-throw-a' });
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await usernames('tx-throw-')).toEqual([]);
  });

  it('that meets a database error writes nothing, and the next statement runs as usual', async () => {
    await database.db.insert(accounts).values({ username: 'tx-dberr-taken' });
    const failed = await database.db
      .transaction(async (tx) => {
        await tx.insert(accounts).values({ username: 'tx-dberr-a' });
        await tx.insert(accounts).values({ username: 'tx-dberr-taken' });
      })
      .catch((e: unknown) => e);
    expect(sqlState(failed)).toBe('23505');
    expect(await usernames('tx-dberr-')).toEqual(['tx-dberr-taken']);
  });

  it('keeps every answer its own among concurrent named, unnamed and transaction statements', async () => {
    const work: Promise<unknown>[] = [];
    const committed: string[] = [];
    for (let i = 0; i < 120; i++) {
      work.push(database.query<{ v: number }>('select $1::int * 2 as v', [i], 'test_concurrent').then((rows) => expect(rows).toEqual([{ v: 2 * i }])));
      work.push(database.query<{ v: string }>(`select $1::text || '-u' as v`, [`${i}`]).then((rows) => expect(rows).toEqual([{ v: `${i}-u` }])));
      if (i % 30 === 0) {
        const name = `tx-concurrent-${100 + i}`;
        committed.push(name);
        work.push(
          database.db.transaction(async (tx) => {
            await tx.insert(accounts).values({ username: name });
            const mine = await tx.select({ username: accounts.username }).from(accounts).where(eq(accounts.username, name));
            expect(mine).toEqual([{ username: name }]);
          }),
        );
      }
    }
    await Promise.all(work);
    expect(await usernames('tx-concurrent-')).toEqual(committed);
  });

  it('rolls back a nested transaction alone', async () => {
    await database.db.transaction(async (tx) => {
      await tx.insert(accounts).values({ username: 'tx-nested-outer' });
      await tx.transaction(async (inner) => {
        await inner.insert(accounts).values({ username: 'tx-nested-inner' });
        inner.rollback();
      }).catch(() => {});
    });
    expect(await usernames('tx-nested-')).toEqual(['tx-nested-outer']);
  });

  it.runIf(embedded)('holds the embedded session: a statement from outside runs only after the commit', async () => {
    const order: string[] = [];
    let outside: Promise<unknown> | null = null;
    await database.db.transaction(async (tx) => {
      await tx.insert(accounts).values({ username: 'tx-own-a' });
      outside = database.query(`select count(*)::int as n from accounts where username like 'tx-own-%'`).then((rows) => {
        order.push('outside');
        return rows;
      });
      // Several round trips to the thread while the outside statement waits.
      for (let i = 0; i < 5; i++) await tx.execute(sql`select 1`);
      await tx.insert(accounts).values({ username: 'tx-own-b' });
      order.push('last statement of the transaction');
    });
    expect(await outside).toEqual([{ n: 2 }]);
    expect(order).toEqual(['last statement of the transaction', 'outside']);
  });
});

describe('a database error', () => {
  it('keeps its SQLSTATE, constraint and message, from drizzle and from a named statement alike', async () => {
    await database.db.insert(accounts).values({ username: 'err-dup' });
    const fromDrizzle = await database.db.insert(accounts).values({ username: 'err-dup' }).catch((e: unknown) => e);
    expect(sqlState(fromDrizzle)).toBe('23505');
    expect((fromDrizzle as Error & { cause: { constraint?: string } }).cause.constraint).toBe('accounts_username_unique');
    const named = await database.query(`insert into accounts (username) values ($1)`, ['err-dup'], 'test_dup_insert').catch((e: unknown) => e);
    expect(sqlState(named)).toBe('23505');
    expect((named as Error).message).toMatch(/duplicate key value violates unique constraint "accounts_username_unique"/);
  });
});

describe('notifications', () => {
  it('a committed pg_notify reaches every handler of the channel until it unsubscribes', async () => {
    const heard: string[] = [];
    const stopA = await database.listen('test_thread_channel', (payload) => heard.push(`a:${payload}`));
    const stopB = await database.listen('test_thread_channel', (payload) => heard.push(`b:${payload}`));
    await database.query(`select pg_notify('test_thread_channel', 'one')`);
    await expect.poll(() => heard.slice().sort()).toEqual(['a:one', 'b:one']);
    await stopA();
    await database.query(`select pg_notify('test_thread_channel', 'two')`);
    await expect.poll(() => heard.length).toBe(3);
    expect(heard[2]).toBe('b:two');
    await stopB();
  });

  it('one sent inside a transaction arrives once, after the commit, and never from one rolled back', async () => {
    const heard: string[] = [];
    const stop = await database.listen('test_tx_channel', (payload) => heard.push(payload));
    try {
      await database.db
        .transaction(async (tx) => {
          await tx.execute(sql`select pg_notify('test_tx_channel', 'rolled back')`);
          tx.rollback();
        })
        .catch(() => {});
      await database.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_notify('test_tx_channel', 'committed')`);
        expect(heard).toEqual([]);
      });
      await database.query(`select pg_notify('test_tx_channel', 'alone')`);
      await expect.poll(() => heard).toEqual(['committed', 'alone']);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(heard).toEqual(['committed', 'alone']);
    } finally {
      await stop();
    }
  });
});

describe('a closed database', () => {
  it('fails every later call as unavailable (503 database_unavailable), not as a bug', async () => {
    const other = await openTestDatabase();
    await other.close();
    for (const attempt of [other.query('select 1'), other.query('select 1', [], 'test_closed'), other.db.select().from(accounts)]) {
      const error = await attempt.catch((e: unknown) => e);
      expect(isDatabaseUnavailable(error)).toBe(true);
    }
  });
});
