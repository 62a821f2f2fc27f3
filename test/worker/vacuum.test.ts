// The embedded database has no autovacuum (src/worker/vacuum.ts): the service vacuums, freezes
// and analyzes the tables that are due itself. The statements are PostgreSQL's own, so they run on
// both databases here; what only the embedded database shows (space never given back without
// them) and the job's wiring are checked on it alone.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { vacuumDue } from '../../src/worker/vacuum.js';
import { build, LogCapture } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

const embedded = !process.env.TEST_DATABASE_URL;

describe('vacuumDue', () => {
  let database: Database;
  beforeEach(async () => {
    database = await openTestDatabase();
  });
  afterEach(async () => {
    await database.close();
  });

  const q = <Row = Record<string, unknown>>(text: string, params: unknown[] = []) => database.query<Row>(text, params);
  const heapBytes = async (table: string) => Number((await q<{ bytes: string }>(`SELECT pg_relation_size($1) AS bytes`, [table]))[0]!.bytes);
  /** One retention-like round: 2,000 new rows, every older one deleted. */
  const churn = async (table: string) => {
    await q(`INSERT INTO ${table} (pad) SELECT repeat('x', 300) FROM generate_series(1, 2000)`);
    await q(`DELETE FROM ${table} WHERE id <= (SELECT max(id) - 2000 FROM ${table})`);
  };

  it('gives the space of deleted rows back to new ones, where without it the table grows every round', async () => {
    await q('CREATE TABLE kept (id bigserial PRIMARY KEY, pad text)');
    await q('CREATE TABLE churned (id bigserial PRIMARY KEY, pad text)');
    const kept: number[] = [];
    for (let round = 0; round < 6; round++) {
      await churn('kept');
      kept.push(await heapBytes('kept'));
    }
    const churned: number[] = [];
    const vacuumed: string[][] = [];
    for (let round = 0; round < 6; round++) {
      await churn('churned');
      vacuumed.push((await vacuumDue(database)).vacuumed);
      churned.push(await heapBytes('churned'));
    }
    // From the second round on, 2,000 dead rows beside 2,000 live ones are due every time.
    for (const tables of vacuumed.slice(1)) expect(tables).toContain('public.churned');
    expect(Math.max(...churned)).toBeLessThanOrEqual(2 * churned[0]!);
    // The premise, where nothing else vacuums: the same rounds without the job grow the table by a round's rows each time.
    if (embedded) expect(kept[5]).toBeGreaterThanOrEqual(5 * kept[0]!);
  });

  it('leaves alone a table under every threshold, and analyzes one whose rows changed without vacuuming it', async () => {
    await q('CREATE TABLE calm (id bigserial PRIMARY KEY, pad text)');
    await q(`INSERT INTO calm (pad) SELECT 'x' FROM generate_series(1, 1000)`);
    // 1,000 rows inserted: over the analyze threshold (50 + 10%), under the vacuum's for inserts (1,000 + 20%).
    const first = await vacuumDue(database);
    expect(first.analyzed).toContain('public.calm');
    expect(first.vacuumed).not.toContain('public.calm');
    expect(first.failed).toEqual([]);
    await q('DELETE FROM calm WHERE id <= 10');
    const second = await vacuumDue(database);
    expect(second.analyzed).not.toContain('public.calm');
    expect(second.vacuumed).not.toContain('public.calm');
    const [stats] = await q<{ vacuums: number; analyzes: number }>(
      `SELECT (vacuum_count + autovacuum_count)::int AS vacuums, (analyze_count + autoanalyze_count)::int AS analyzes FROM pg_stat_user_tables WHERE relname = 'calm'`,
    );
    expect(stats!.analyzes).toBe(1);
    if (embedded) expect(stats!.vacuums).toBe(0);
  });

  it('vacuums every table of ours when asked for all (the first job of a process, whose statistics start at zero), catalogs only when due', async () => {
    await q('CREATE TABLE calm (id bigserial PRIMARY KEY, pad text)');
    await q(`INSERT INTO calm (pad) SELECT 'x' FROM generate_series(1, 100)`);
    await q('DELETE FROM calm WHERE id <= 5');
    const result = await vacuumDue(database, { all: true });
    expect(result.failed).toEqual([]);
    expect(result.vacuumed).toEqual(expect.arrayContaining(['public.calm', 'public.instances', 'public.usage_records']));
    expect(result.vacuumed.filter((name) => !name.startsWith('public.'))).toEqual([]);
    expect(result.frozen).toEqual([]);
    const [stats] = await q<{ dead: number }>(`SELECT n_dead_tup::int AS dead FROM pg_stat_user_tables WHERE relname = 'calm'`);
    expect(stats!.dead).toBe(0);
  });

  it('freezes every table, catalogs included, whose transaction ids grow older than the freeze age', async () => {
    // Write transactions age every table's relfrozenxid by one each.
    for (let i = 0; i < 300; i++) await q('SELECT txid_current()');
    const databaseAge = async () => (await q<{ age: number }>('SELECT age(datfrozenxid) AS age FROM pg_database WHERE datname = current_database()'))[0]!.age;
    const before = await databaseAge();
    expect(before).toBeGreaterThan(300);
    const result = await vacuumDue(database, { freezeAge: 100 });
    expect(result.failed).toEqual([]);
    expect(result.frozen).toEqual(expect.arrayContaining(['pg_catalog.pg_class', 'public.instances', 'public.usage_records']));
    const [oldest] = await q<{ age: number }>(
      `SELECT max(age(relfrozenxid))::int AS age FROM pg_class WHERE relkind IN ('r', 'm') AND relpersistence = 'p' AND relnamespace <> 'pg_toast'::regnamespace`,
    );
    expect(oldest!.age).toBeLessThan(100 + result.vacuumed.length + 10);
    // The database's own horizon moves with its tables': what a standalone backend needs so that its counter never wraps around.
    expect(await databaseAge()).toBeLessThan(before);
  });
});

describe.skipIf(!embedded)('the vacuum after each retention job, on the embedded database', () => {
  it('runs with the retention job and says what it did in the log', async () => {
    const logs = new LogCapture();
    // The churn comes first: the job's timer starts while the app registers, and a job between
    // the insert and the delete would vacuum the table a second time.
    const database = await openTestDatabase();
    await database.query('CREATE TABLE churned (id bigserial PRIMARY KEY, pad text)');
    await database.query(`INSERT INTO churned (pad) SELECT 'x' FROM generate_series(1, 500)`);
    await database.query('DELETE FROM churned');
    const t = await build({ RETENTION_INTERVAL_MS: '1000' }, { logs, database });
    try {
      // The first job comes after RETENTION_INTERVAL_MS (1 s here): waited for, up to 20 s.
      const deadline = Date.now() + 20_000;
      while (!logs.text.includes('embedded database vacuumed') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      const line = logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'embedded database vacuumed');
      expect(line).toMatchObject({ level: 30, component: 'worker' });
      // The first job of the process vacuums every table of ours, churned or not.
      expect(line!.vacuumed).toEqual(expect.arrayContaining(['public.churned', 'public.instances']));
      const [stats] = await t.database.query<{ dead: number; vacuums: number }>(`SELECT n_dead_tup::int AS dead, vacuum_count::int AS vacuums FROM pg_stat_user_tables WHERE relname = 'churned'`);
      expect(stats).toEqual({ dead: 0, vacuums: 1 });
    } finally {
      await t.close();
      await database.close();
    }
  });
});

describe('vacuumEmbedded', () => {
  it('vacuums on the embedded database only: PostgreSQL has its autovacuum', async () => {
    const t = await build({ WORKER_CONCURRENCY: '0' });
    try {
      const result = await t.app.vacuumEmbedded();
      if (embedded) expect(result).toMatchObject({ failed: [] });
      else expect(result).toBeNull();
    } finally {
      await t.close();
    }
  });
});
