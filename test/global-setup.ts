// Runs once per test run. Creating and migrating a database is the slowest part of a test,
// so it happens once here: a PGlite snapshot on disk (reused while migrations are
// unchanged) and, when TEST_DATABASE_URL is set, a template database on that server.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrationsFolder } from '../src/db/client.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteSnapshotFile: string;
    postgresTemplate: string | null;
  }
}

// One template per test run, so that runs sharing a server (two checkouts, CI's two
// Node versions) never drop each other's template; teardown removes it.
const POSTGRES_TEMPLATE = `ladder_tpl_${process.pid}_${Date.now().toString(36)}`;

function migrationsDigest(folder: string): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(folder, { recursive: true }).map(String).sort()) {
    const full = path.join(folder, file);
    if (file.endsWith('.sql') || file.endsWith('.json')) hash.update(file).update(readFileSync(full));
  }
  return hash.digest('hex').slice(0, 16);
}

async function pgliteSnapshot(): Promise<string> {
  const folder = migrationsFolder();
  const dir = path.resolve('node_modules/.cache/ladder-tests');
  const file = path.join(dir, `pglite-${migrationsDigest(folder)}.tar`);
  if (existsSync(file)) return file;
  const client = new PGlite();
  await migrate(drizzle(client), { migrationsFolder: folder });
  const dump = await client.dumpDataDir('none');
  await client.close();
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  return file;
}

async function withAdmin(url: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

async function postgresTemplate(url: string): Promise<string> {
  await withAdmin(url, `create database ${POSTGRES_TEMPLATE}`);
  const templateUrl = new URL(url);
  templateUrl.pathname = `/${POSTGRES_TEMPLATE}`;
  const client = new pg.Client({ connectionString: templateUrl.toString() });
  await client.connect();
  try {
    const { migrate: migratePg } = await import('drizzle-orm/node-postgres/migrator');
    const { drizzle: drizzlePg } = await import('drizzle-orm/node-postgres');
    await migratePg(drizzlePg(client), { migrationsFolder: migrationsFolder() });
  } finally {
    await client.end();
  }
  return POSTGRES_TEMPLATE;
}

export default async function setup(project: TestProject) {
  project.provide('pgliteSnapshotFile', await pgliteSnapshot());
  const url = process.env.TEST_DATABASE_URL;
  project.provide('postgresTemplate', url ? await postgresTemplate(url) : null);
  return async () => {
    if (url) await withAdmin(url, `drop database if exists ${POSTGRES_TEMPLATE} with (force)`);
  };
}
