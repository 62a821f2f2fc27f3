// The built server as `npm start` runs it (dist/server/server.js) as a child process, and a database of its own on the
// TEST_DATABASE_URL server, for tests that kill processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/client.js';
import { ENCRYPTION_KEY } from './build.js';

export interface SpawnedServer {
  child: ChildProcess;
  output: () => string;
  /** Its DATA_DIR: the embedded database, the generated TLS certificate. */
  dataDir: string;
  /** The base URL from its "Server listening at" log line; needs LOG_LEVEL info. */
  url(): Promise<string>;
  /** SIGKILL: no shutdown of any kind. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** The server as `npm start` runs it; made by `npm run build`. */
export const SERVER_ENTRY = path.resolve('dist/server/server.js');

export async function spawnServer(env: Record<string, string>, options: { maxOpenFiles?: number } = {}): Promise<SpawnedServer> {
  if (!statSync(SERVER_ENTRY, { throwIfNoEntry: false })) throw new Error('run `npm run build` first (npm test does)');
  const dataDir = env.DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'ladder-spawned-'));
  // A descriptor limit of its own (`ulimit -n`), for resource tests; exec keeps the pid the server's.
  const [command, args] = options.maxOpenFiles
    ? ['/bin/sh', ['-c', `ulimit -n ${options.maxOpenFiles} && exec "$0" "$1"`, process.execPath, SERVER_ENTRY]]
    : [process.execPath, [SERVER_ENTRY]];
  const child = spawn(command, args, {
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      ENCRYPTION_KEY,
      LOG_LEVEL: 'warn',
      ALLOW_PRIVATE_ENDPOINTS: 'true',
      ...env,
      DATA_DIR: dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let listening: ((url: string) => void) | null = null;
  const url = new Promise<string>((resolve) => (listening = resolve));
  child.stdout!.on('data', (c: Buffer) => {
    output = (output + c.toString()).slice(-20_000);
    const match = /"msg":"Server listening at (https?:\/\/[^"]+)"/.exec(output);
    if (match && listening) {
      listening(match[1]!);
      listening = null;
    }
  });
  child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
  // 'close': after the exit and the last of its output (a start-up error on stderr included).
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  // LOG_LEVEL warn hides the listening line; the process is up once it has not died for a moment
  // after opening the database, which the caller observes through the rows it claims.
  await new Promise((resolve) => setTimeout(resolve, 200));
  if (child.exitCode !== null) throw new Error(`server exited at start: ${output}`);
  return {
    child,
    output: () => output,
    dataDir,
    url: () =>
      Promise.race([url, exited.then(() => Promise.reject(new Error(`server exited before listening: ${output}`)))]),
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

/** GET `route` on a spawned server over HTTPS, trusting the certificate it generated in its DATA_DIR. */
export async function getJson<T = any>(server: SpawnedServer, route: string, headers: Record<string, string>): Promise<{ status: number; body: T }> {
  const ca = readFileSync(path.join(server.dataDir, 'tls', 'localhost.crt'), 'utf8');
  const base = await server.url();
  return new Promise((resolve, reject) => {
    const req = https.get(`${base}${route}`, { ca, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(body) as T }));
    });
    req.on('error', reject);
  });
}

/** An empty database on the PostgreSQL server `serverUrl` names, named `<prefix>_<random>`; `drop()` removes it. */
export async function emptyPostgres(serverUrl: string, prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
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
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

/** A fresh, migrated database on the TEST_DATABASE_URL server; `drop()` removes it. */
export async function scratchPostgres(serverUrl: string): Promise<{ url: string; database: Database; drop(): Promise<void> }> {
  const empty = await emptyPostgres(serverUrl, 'ladder_proc');
  const database = await openDatabase({ url: empty.url, dataDir: null });
  return {
    url: empty.url,
    database,
    drop: async () => {
      await database.close();
      await empty.drop();
    },
  };
}
