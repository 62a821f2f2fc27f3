// Opens the database the configuration selects: a Postgres server when DATABASE_URL is
// set, otherwise an embedded PGlite database (real Postgres compiled to WebAssembly) kept
// in DATA_DIR and run on a thread of its own (src/db/pglite-thread.ts). Both speak the same
// SQL, so everything above this file is shared.
// The drivers, drizzle and the schema are imported when a database is opened, not with this
// file: the entry point imports it, and the embedded database's thread (the longest part of a
// start) is spawned before the main thread spends 80 ms loading them.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as schema from './schema.js';
import { lockEmbeddedDatabase } from './embedded-lock.js';
import { imageFolder } from './pglite-image.js';
import { openRemotePglite, type RemotePglite } from './pglite-remote.js';
import type { Created } from './pglite-thread-protocol.js';
import type { NotificationHandler } from './notifications.js';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  /**
   * Run raw SQL. A `name` makes it a prepared statement, parsed and planned once per
   * connection: for the statements a run writes on every call (one name, one text).
   */
  query<Row = Record<string, unknown>>(text: string, params?: unknown[], name?: string): Promise<Row[]>;
  /**
   * For frequent small writes that a crash of the database server itself may lose, never a
   * crash of this process (run checkpoints, events, lease renewals): on PostgreSQL they commit
   * asynchronously (the server's WAL writer flushes them within a fraction of a second), saving
   * a disk flush each; on the embedded database, which has no WAL writer, it is `query`.
   * `name` makes it a prepared statement.
   */
  queryRelaxed<Row = Record<string, unknown>>(name: string, text: string, params?: unknown[]): Promise<Row[]>;
  kind: 'postgres' | 'pglite';
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /**
   * Calls `handler` for each `pg_notify(channel, payload)` committed by any process on this
   * database (only this process, for the embedded one). Resolves with an unsubscribe function.
   */
  listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>>;
  /**
   * Resolves once the database serves statements; rejects with why it could not open. Statements
   * may be sent before (they wait). `openDatabase` resolves after it, unless asked for `early`.
   */
  opened: Promise<void>;
  /** The embedded database: how this start made it, if it was new (for the start-up log); null until `opened`. */
  readonly created: Created;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** A postgres:// URL; null selects the embedded database. */
  url: string | null;
  /** Where the embedded database keeps its files; null keeps it in memory (tests). */
  dataDir: string | null;
  /** Apply pending migrations before returning (the default). */
  migrate?: boolean;
  /** Start an in-memory embedded database from a `dumpDataDir()` snapshot: much faster than a fresh one. */
  pgliteSnapshot?: Blob;
  /** Where a new embedded `dataDir` may be made from (src/db/pglite-image.ts); default the build's, null: initdb. */
  pgliteImage?: string | null;
  /**
   * The embedded database: resolve once statements can be sent, while its thread still opens it
   * (`opened` says when it has), so that the server registers its routes meanwhile. PostgreSQL is
   * always connected and migrated first.
   */
  early?: boolean;
}

// Any process may run migrations at start; this lock makes concurrent starts take turns.
const MIGRATION_LOCK_ID = 7_261_730_412;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  // The embedded database's thread applies them itself, before it serves any statement.
  if (!options.url) return openPglite(options);
  const database = await openPostgres(options.url);
  if (options.migrate !== false) {
    try {
      await database.migrate();
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  return database;
}

async function openPostgres(url: string): Promise<Database & { migrate(): Promise<void> }> {
  const [{ default: pg }, { drizzle: drizzlePg }, { migrate: migratePg }, schema, { listenPostgres }] = await Promise.all([
    import('pg'),
    import('drizzle-orm/node-postgres'),
    import('drizzle-orm/node-postgres/migrator'),
    import('./schema.js'),
    import('./notifications.js'),
  ]);
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  const relaxed = new pg.Pool({ connectionString: url, max: 4, options: '-c synchronous_commit=off' });
  relaxed.on('error', () => {});
  return {
    db,
    kind: 'postgres',
    query: async <Row>(text: string, params?: unknown[], name?: string) =>
      (await pool.query({ text, ...(name ? { name } : {}), ...(params ? { values: params } : {}) })).rows as Row[],
    queryRelaxed: async <Row>(name: string, text: string, params?: unknown[]) =>
      (await relaxed.query({ name, text, ...(params ? { values: params } : {}) })).rows as Row[],
    ping: async () => void (await pool.query('select 1')),
    listen: (channel, handler) => listenPostgres(url, channel, handler),
    opened: Promise.resolve(),
    created: null,
    close: async () => {
      await Promise.all([pool.end(), relaxed.end()]);
    },
    migrate: async () => {
      const client = await pool.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
        await migratePg(drizzlePg(client), { migrationsFolder: migrationsFolder() });
      } finally {
        await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => {});
        client.release();
      }
    },
  };
}

async function openPglite({ dataDir, pgliteSnapshot, migrate, pgliteImage, early }: DatabaseOptions): Promise<Database> {
  let unlock = () => {};
  // Once: a second call must not remove a lock another process has taken since.
  const release = () => {
    const once = unlock;
    unlock = () => {};
    once();
  };
  let dir: string | null = null;
  if (dataDir) {
    dir = path.resolve(dataDir, 'pgdata');
    mkdirSync(dir, { recursive: true });
    unlock = lockEmbeddedDatabase(path.resolve(dataDir));
  }
  let client: RemotePglite | undefined;
  let drizzlePglite: typeof import('drizzle-orm/pglite').drizzle;
  let schema: typeof import('./schema.js');
  let created: Created = null;
  try {
    client = openRemotePglite({
      dir,
      snapshot: pgliteSnapshot ?? null,
      migrationsFolder: migrate === false ? null : migrationsFolder(),
      imageFolder: pgliteImage === undefined ? imageFolder() : pgliteImage,
    });
    // A thread that cannot open the database is gone: its directory is free again.
    client.opened.then((how) => void (created = how), release);
    // Loaded while the thread opens the database.
    [{ drizzle: drizzlePglite }, schema] = await Promise.all([import('drizzle-orm/pglite'), import('./schema.js'), early ? null : client.opened]);
  } catch (error) {
    // The thread, if it opened, before the lock on its directory goes.
    await client?.close().catch(() => {});
    release();
    throw error;
  }
  const remote = client;
  const opened = remote.opened.then(() => {});
  opened.catch(() => {}); // awaited by the owner (the server, before it listens), reported there
  // drizzle calls only `query` and `transaction` of its client, which the remote client has.
  const db = drizzlePglite(remote as unknown as PGlite, { schema });
  const query = async <Row>(text: string, params?: unknown[], name?: string) =>
    name ? remote.prepared<Row>(name, text, params) : (await remote.query<Row>(text, params)).rows;
  return {
    db: db as unknown as Db,
    kind: 'pglite',
    query,
    queryRelaxed: (name, text, params) => remote.prepared(name, text, params),
    ping: async () => void (await remote.query('select 1')),
    listen: (channel, handler) => remote.listen(channel, handler),
    opened,
    get created() {
      return created;
    },
    close: async () => {
      await remote.close();
      release();
    },
  };
}

/** migrations/ sits at the project root, whether we run from src/ (tests) or dist/src/. */
export function migrationsFolder(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'migrations', 'meta', '_journal.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('migrations/ folder not found next to the installed service');
    dir = parent;
  }
  return path.join(dir, 'migrations');
}
