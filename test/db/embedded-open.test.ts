// Opening the embedded database on its thread (src/db/pglite-thread.ts, pglite-remote.ts): the
// client takes statements at once and the thread serves them once the database is open (the
// server registers its routes meanwhile); a database behind the migrations is brought up to date
// at open, one already up to date is opened without drizzle's migrator; a database that cannot
// open fails its opening and every statement sent meanwhile with the same error.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationsFolder } from '../../src/db/client.js';
import { imageFolder } from '../../src/db/pglite-image.js';
import { openRemotePglite, type RemotePglite } from '../../src/db/pglite-remote.js';

const scratch: string[] = [];
const clients: RemotePglite[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const tempDir = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
};

interface Journal {
  entries: { idx: number; version: string; when: number; tag: string; breakpoints: boolean }[];
}

/** A copy of the migrations folder with one more migration after the newest, as an upgrade brings. */
function migrationsWith(tag: string, sql: string, options: { only?: boolean } = {}): string {
  const folder = tempDir('ladder-migrations-');
  cpSync(migrationsFolder(), folder, { recursive: true });
  const file = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(file, 'utf8')) as Journal;
  const newest = journal.entries.at(-1)!;
  const entry = { ...newest, idx: newest.idx + 1, when: newest.when + 1, tag };
  journal.entries = options.only ? [{ ...entry, idx: 0 }] : [...journal.entries, entry];
  writeFileSync(file, JSON.stringify(journal));
  writeFileSync(path.join(folder, `${tag}.sql`), sql);
  return folder;
}

function open(dir: string | null, folder: string | null): RemotePglite {
  if (dir) mkdirSync(dir, { recursive: true });
  const client = openRemotePglite({ dir, snapshot: null, migrationsFolder: folder, imageFolder: folder === migrationsFolder() ? imageFolder() : null });
  clients.push(client);
  return client;
}

const applied = async (client: RemotePglite) =>
  (await client.query<{ created_at: string }>('select created_at::text from drizzle.__drizzle_migrations order by id')).rows.map((r) => Number(r.created_at));
const journalDates = (folder: string) => (JSON.parse(readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as Journal).entries.map((e) => e.when);

describe.skipIf(process.env.TEST_DATABASE_URL)('opening the embedded database', () => {
  it('serves statements sent before it opened, once it has', async () => {
    const client = open(path.join(tempDir('ladder-data-'), 'pgdata'), migrationsFolder());
    const order: string[] = [];
    const answer = client.query<{ n: number }>('select 41 + 1 as n').then((result) => {
      order.push('statement');
      return result.rows;
    });
    const created = client.opened.then((how) => {
      order.push('opened');
      return how;
    });
    expect(await answer).toEqual([{ n: 42 }]);
    expect(await created).toEqual({ from: 'image' });
    expect(order).toEqual(['opened', 'statement']);
  }, 60_000);

  it("starts with a 32 MB buffer pool and PGlite's own start parameters, on a data directory and in memory", async () => {
    const settings = async (client: RemotePglite) =>
      (await client.query<{ name: string; setting: string }>("select name, current_setting(name) as setting from unnest(array['shared_buffers', 'search_path', 'max_worker_processes']) as name")).rows;
    const expected = [
      { name: 'shared_buffers', setting: '32MB' },
      { name: 'search_path', setting: 'public' },
      { name: 'max_worker_processes', setting: '0' },
    ];
    expect(await settings(open(path.join(tempDir('ladder-data-'), 'pgdata'), migrationsFolder()))).toEqual(expected);
    expect(await settings(open(null, null))).toEqual(expected);
  }, 60_000);

  it('applies a migration newer than the database at open, and opens an up-to-date database as it is', async () => {
    const dir = path.join(tempDir('ladder-data-'), 'pgdata');
    const first = open(dir, migrationsFolder());
    await first.opened;
    expect(await applied(first)).toEqual(journalDates(migrationsFolder()));
    await first.close();

    const upgraded = migrationsWith('9999_open_check', 'CREATE TABLE "open_check" ("n" integer);');
    const second = open(dir, upgraded);
    expect(await second.opened).toBeNull();
    expect(await applied(second)).toEqual(journalDates(upgraded));
    await second.query('insert into open_check values (7)');
    await second.close();

    // Up to date: opened as it is, nothing applied twice.
    const third = open(dir, upgraded);
    expect(await third.opened).toBeNull();
    expect(await applied(third)).toEqual(journalDates(upgraded));
    expect((await third.query('select n from open_check')).rows).toEqual([{ n: 7 }]);
  }, 60_000);

  it('that fails fails its opening and every statement sent meanwhile or after with the same error', async () => {
    const broken = migrationsWith('0000_broken', 'CREATE TABLE "broken" (;', { only: true });
    const client = open(null, broken);
    const early = client.query('select 1').catch((error: unknown) => error);
    const why = await client.opened.catch((error: unknown) => error);
    expect(why).toBeInstanceOf(Error);
    expect((why as Error).message).toBe('Failed query: CREATE TABLE "broken" (;\nparams: ');
    expect(await early).toBe(why);
    await expect(client.query('select 1')).rejects.toBe(why);
  }, 60_000);
});
