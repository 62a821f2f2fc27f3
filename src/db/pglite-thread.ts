// The embedded database's own thread. PGlite runs PostgreSQL as WebAssembly on the thread that
// calls it, so on the main thread every statement stalled every request of the process (a run
// checkpoint 0.4-0.7 ms). Here it runs beside the event loop; src/db/pglite-remote.ts is the
// main thread's side. Requests are served in the order they arrive: a statement alone runs at
// once (src/db/pglite-prepared.ts), one of a transaction runs in it, and any other waits through
// PGlite's own locks until the transaction ends, exactly as PGlite's `transaction()` orders
// callers in-process.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { currentStamp, extractImage, readImage } from './pglite-image.js';
import { preparedStatements } from './pglite-prepared.js';
import { serializeError, type Created, type OpenOptions, type Reply, type Request } from './pglite-thread-protocol.js';

const port = parentPort!;
// Held for the thread's life (the main thread ends it with `terminate()`). Whenever a thread's
// event loop runs out of referenced handles, Node waits until every pending task of V8's
// process-wide worker pool has run; at start that pool is busy optimising PGlite's WebAssembly,
// and the thread waited there 100-400 ms before it read its first request (23-63 ms since).
port.ref();
const post = (reply: Reply) => port.postMessage(reply);

/** An open transaction (its statements run in PGlite's one session while it holds the locks): how to end it (true commits). */
interface OpenTransaction {
  end: (commit: boolean) => void;
  ended: Promise<void>;
}

const ROLLBACK = Symbol('rollback');

function serve(client: PGlite): void {
  const transactions = new Map<number, OpenTransaction>();
  const unlisten = new Map<string, () => Promise<void>>();
  // The channels listened to, by the name PostgreSQL reports them under. A notification reaches
  // the main thread one of two ways, never both: those PGlite's own statements commit (a
  // transaction's COMMIT, which PGlite's `transaction()` sends) through its listeners, registered
  // below; those a statement run here commits through src/db/pglite-prepared.ts, which reads them
  // from the answer, past PGlite.
  const listening = new Map<string, string>();
  const statements = preparedStatements(client, (reported, payload) => {
    const channel = listening.get(reported);
    if (channel !== undefined) post({ notify: channel, payload });
  });
  /** Requests under way: while there are others, or a transaction is open, a statement waits its turn through PGlite's locks. */
  let underWay = 0;
  let nextTransaction = 0;

  const begin = () =>
    new Promise<number>((resolve, reject) => {
      const ended: Promise<void> = client
        .transaction(
          () =>
            new Promise<void>((commit, rollback) => {
              const id = ++nextTransaction;
              transactions.set(id, { end: (ok) => (ok ? commit() : rollback(ROLLBACK)), ended });
              resolve(id);
            }),
        )
        .catch((error: unknown) => {
          if (error !== ROLLBACK) throw error;
        });
      // BEGIN itself failed, so the callback never ran; later failures are the commit's, for `end`.
      ended.catch(reject);
    });

  // A statement runs at once when it is alone (nearly always, since PGlite finishes every request
  // within the same turn of this thread's event loop) or one of the open transaction's, which holds
  // PGlite's locks; any other waits for them.
  const runner = (tx: number | null) => {
    if (tx !== null && !transactions.has(tx)) throw new Error(`transaction ${tx} is not open`);
    return tx !== null || (underWay === 1 && transactions.size === 0) ? statements.now : statements.queued;
  };

  const handle = async (request: Request): Promise<unknown> => {
    switch (request.op) {
      case 'query':
        return runner(request.tx)(null, request.text, request.params, { rowMode: request.rowMode, rawTypes: request.rawTypes });
      case 'prepared':
        return (await runner(null)(request.name, request.text, request.params)).rows;
      case 'begin':
        return begin();
      case 'end': {
        const open = transactions.get(request.tx);
        if (!open) throw new Error(`transaction ${request.tx} is not open`);
        transactions.delete(request.tx);
        open.end(request.commit);
        await open.ended;
        return null;
      }
      case 'listen':
        if (!unlisten.has(request.channel)) {
          unlisten.set(request.channel, await client.listen(request.channel, (payload) => post({ notify: request.channel, payload })));
          listening.set(postgresName(request.channel), request.channel);
        }
        return null;
      case 'unlisten':
        await unlisten.get(request.channel)?.();
        unlisten.delete(request.channel);
        listening.delete(postgresName(request.channel));
        return null;
      case 'close':
        await client.close();
        return null;
    }
  };

  port.on('message', ({ id, request }: { id: number; request: Request }) => {
    underWay += 1;
    handle(request)
      .finally(() => (underWay -= 1))
      .then(
        (value) => post({ id, value }),
        (error: unknown) => post({ id, error: serializeError(error) }),
      );
  });
}

/** A channel's name as PostgreSQL folds it (PGlite's rule: quoted keeps its case, otherwise lower case). */
function postgresName(channel: string): string {
  return channel.length > 1 && channel.startsWith('"') && channel.endsWith('"') ? channel.slice(1, -1) : channel.toLowerCase();
}

// PostgreSQL zeroes its whole buffer pool as it starts: at PGlite's default of 128 MB that was
// 200-300 ms of this thread at every start, and 100-120 MB of memory resident from then on.
// At 32 MB the start is 100-150 ms shorter and no workload measured was slower: the usage
// reports and run lists of bench:ledger at 2,000,000 rows (whose raw scan reads 450 MB either
// way), bench:runs' checkpoints and throughput. A page outside the pool is read from the data
// directory's file, which the operating system caches (docs/performance.md).
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=32MB'];

/** PGlite on a data directory (`dataDir`) or in memory, opened. */
async function start(dataDir?: string, loadDataDir?: Blob): Promise<PGlite> {
  const client = new PGlite({ dataDir, loadDataDir, startParams: START_PARAMS });
  await client.waitReady;
  return client;
}

/** PGlite on `dir`: as it is, or new, made from the build's image when it matches, else by initdb. */
async function openDir(dir: string, options: OpenOptions): Promise<{ client: PGlite; created: Created }> {
  if (readdirSync(dir).length > 0) return { client: await start(dir), created: null };
  const image = !options.migrationsFolder
    ? { skipped: 'no migrations asked for' }
    : options.imageFolder
      ? readImage(options.imageFolder, currentStamp(options.migrationsFolder))
      : { skipped: 'none asked for' };
  if ('tar' in image) {
    extractImage(image.tar, dir);
    return { client: await start(dir), created: { from: 'image' } };
  }
  return { client: await start(dir), created: { from: 'initdb', imageSkipped: image.skipped } };
}

/**
 * Drizzle's migrator applies each migration of the journal dated after the newest one its table
 * records, so when that is the journal's newest it would apply nothing. This asks exactly that
 * (two small statements), so that a start on an up-to-date database (every start but the first after an
 * upgrade) neither loads drizzle (70-90 ms here) nor runs its migrator (40-70 ms). True when the
 * migrator must run; a database without drizzle's table (a new one made by initdb) needs it.
 */
async function migrationsPending(client: PGlite, folder: string): Promise<boolean> {
  const journal = JSON.parse(readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: { when: number }[] };
  const newest = Math.max(0, ...journal.entries.map((entry) => entry.when));
  const [table] = (await client.query<{ present: boolean }>(`select to_regclass('drizzle.__drizzle_migrations') is not null as present`)).rows;
  if (!table?.present) return true;
  const [row] = (await client.query<{ current: boolean }>('select coalesce(max(created_at), 0) >= $1::bigint as current from drizzle.__drizzle_migrations', [newest])).rows;
  return !row?.current;
}

async function migrateSchema(client: PGlite, migrationsFolder: string): Promise<void> {
  const [{ drizzle }, { migrate }] = await Promise.all([import('drizzle-orm/pglite'), import('drizzle-orm/pglite/migrator')]);
  await migrate(drizzle(client), { migrationsFolder });
}

// Migrations run here, before the first request is read: no statement meets an old schema, and
// no round trip waits for the main thread, which is still loading the HTTP stack at start-up.
async function open(options: OpenOptions): Promise<void> {
  let opened: { client: PGlite; created: Created };
  try {
    opened = options.dir ? await openDir(options.dir, options) : { client: await start(undefined, options.snapshot ?? undefined), created: null };
  } catch (error) {
    post({ ready: false, error: serializeError(error) });
    return;
  }
  try {
    if (options.migrationsFolder && (await migrationsPending(opened.client, options.migrationsFolder))) await migrateSchema(opened.client, options.migrationsFolder);
  } catch (error) {
    await opened.client.close().catch(() => {});
    post({ ready: false, error: serializeError(error) });
    return;
  }
  serve(opened.client);
  post({ ready: true, created: opened.created });
}

void open(workerData as OpenOptions);
