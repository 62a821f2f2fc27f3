// The built server (dist/src/server.js) as a child process, and a database of its own on the
// TEST_DATABASE_URL server, for tests that kill processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/client.js';
import { ENCRYPTION_KEY } from './build.js';

export interface SpawnedServer {
  child: ChildProcess;
  output: () => string;
  /** SIGKILL: no shutdown of any kind. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export async function spawnServer(env: Record<string, string>): Promise<SpawnedServer> {
  const entry = path.resolve('dist/src/server.js');
  if (!statSync(entry, { throwIfNoEntry: false })) throw new Error('run `npm run build` first (npm test does)');
  const child = spawn(process.execPath, [entry], {
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'ladder-spawned-')),
      ENCRYPTION_KEY,
      LOG_LEVEL: 'warn',
      ALLOW_PRIVATE_ENDPOINTS: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
  child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // LOG_LEVEL warn hides the listening line; the process is up once it has not died for a moment
  // after opening the database, which the caller observes through the rows it claims.
  await new Promise((resolve) => setTimeout(resolve, 200));
  if (child.exitCode !== null) throw new Error(`server exited at start: ${output}`);
  return {
    child,
    output: () => output,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A fresh, migrated database on the TEST_DATABASE_URL server; `drop()` removes it. */
export async function scratchPostgres(serverUrl: string): Promise<{ url: string; database: Database; drop(): Promise<void> }> {
  const name = `ladder_proc_${randomBytes(5).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString(), dataDir: null });
  return {
    url: url.toString(),
    database,
    drop: async () => {
      await database.close();
      await admin(`drop database if exists ${name} with (force)`);
    },
  };
}
