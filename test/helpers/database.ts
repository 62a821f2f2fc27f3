// A fresh, migrated, empty database for one test app: PGlite in memory by default, or a
// new database on the TEST_DATABASE_URL server, cloned from the migrated template.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';

let snapshot: Blob | null = null;
const migratedSnapshot = async () => (snapshot ??= new Blob([await readFile(inject('pgliteSnapshotFile'))]));

export async function openTestDatabase(): Promise<Database> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return openDatabase({ url: null, dataDir: null, migrate: false, pgliteSnapshot: await migratedSnapshot() });
  const name = `ladder_t_${randomBytes(6).toString('hex')}`;
  await withAdmin(serverUrl, (admin) => admin.query(`create database ${name} template ${inject('postgresTemplate')}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString(), dataDir: null, migrate: false });
  return {
    ...database,
    close: async () => {
      await database.close();
      await withAdmin(serverUrl, (admin) => admin.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/**
 * A new DATA_DIR holding a migrated embedded database, for a spawned server or `openDatabase`
 * with that dataDir. Seeded from the snapshot: a fresh one would take seconds of initdb.
 */
export async function embeddedDataDir(): Promise<string> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-embedded-'));
  // Where src/db/client.ts keeps the embedded database inside DATA_DIR.
  const seed = new PGlite(path.join(dataDir, 'pgdata'), { loadDataDir: await migratedSnapshot() });
  await seed.close();
  return dataDir;
}

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
