// The main thread's side of the embedded database's thread (src/db/pglite-thread.ts): the part
// of PGlite's client that drizzle calls (`query`, `transaction`), named statements, LISTEN, and
// close. A transaction is owned by its caller: BEGIN gives it a number, its statements carry
// that number to the same session, and every other statement waits behind it in the thread.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { QueryOptions, Results } from '@electric-sql/pglite';
import {
  deserializeError,
  type Created,
  type OpenOptions,
  type QueryResult,
  type Reply,
  type Request,
} from './pglite-thread-protocol.js';
import type { NotificationHandler } from './notifications.js';

/** What drizzle's PGlite session calls on a client or on a transaction's session. */
export interface RemoteSession {
  query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
}

export interface RemotePglite extends RemoteSession {
  transaction<T>(callback: (tx: RemoteSession) => Promise<T>): Promise<T>;
  prepared<Row>(name: string, text: string, params?: unknown[]): Promise<Row[]>;
  listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>>;
  /**
   * Resolves once the thread has opened (and migrated) the database, with how this start made it
   * if it was new; rejects with why it could not, and every statement sent meanwhile with it.
   * Statements may be sent before: the thread reads them once it serves.
   */
  opened: Promise<Created>;
  close(): Promise<void>;
}

// Thrown to every caller once the thread is gone; src/db/unavailable.ts knows the words.
const closedError = (why: string) => new Error(`PGlite is closed${why}`);

/** Starts the thread that opens the database; the client is usable at once (see `opened`). */
export function openRemotePglite(options: OpenOptions): RemotePglite {
  const worker = new Worker(threadEntry(), { workerData: options });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const listeners = new Map<string, Set<NotificationHandler>>();
  let nextId = 0;
  let closed: Error | null = null;
  let opening: { resolve: (created: Created) => void; reject: (error: Error) => void } | null = null;
  const opened = new Promise<Created>((resolve, reject) => (opening = { resolve, reject }));
  opened.catch(() => {}); // its owner awaits it; a start that fails before then is reported there

  // A request in flight keeps the process alive, as an in-process statement would; an idle
  // thread does not.
  worker.unref();
  // Every caller waiting, every later one and the opening, if still under way, get `error`.
  const fail = (error: Error) => {
    closed ??= error;
    for (const { reject } of pending.values()) reject(closed);
    pending.clear();
    opening?.reject(closed);
    opening = null;
  };
  worker.on('error', (error) => fail(closedError(`: its thread failed (${error.message})`)));
  worker.on('exit', (code) => fail(closedError(opening ? `: its thread exited with code ${code} while opening` : '')));
  worker.on('message', (reply: Reply) => {
    if ('id' in reply) {
      const call = pending.get(reply.id);
      if (!call) return;
      pending.delete(reply.id);
      if (pending.size === 0) worker.unref();
      if ('error' in reply) call.reject(deserializeError(reply.error));
      else call.resolve(reply.value);
    } else if ('notify' in reply) {
      for (const handler of listeners.get(reply.notify) ?? []) handler(reply.payload);
    } else if (reply.ready) {
      opening?.resolve(reply.created);
      opening = null;
    } else {
      fail(deserializeError(reply.error));
      void worker.terminate();
    }
  });

  const call = <T>(request: Request): Promise<T> => {
    if (closed) return Promise.reject(closed);
    const id = ++nextId;
    if (pending.size === 0) worker.ref();
    worker.postMessage({ id, request });
    return new Promise<T>((resolve, reject) => pending.set(id, { resolve: resolve as (value: unknown) => void, reject }));
  };

  const query = async <T>(tx: number | null, text: string, params: unknown[] = [], options?: QueryOptions) => {
    // drizzle's parsers leave a few types (dates, intervals) as text for its own mapping: the
    // thread is told which, since functions do not cross threads.
    const rawTypes = options?.parsers ? Object.keys(options.parsers).map(Number) : [];
    const result = await call<QueryResult>({ op: 'query', text, params, rowMode: options?.rowMode ?? 'object', rawTypes, tx });
    return result as Results<T>;
  };

  return {
    query: (text, params, options) => query(null, text, params, options),
    async transaction(callback) {
      const tx = await call<number>({ op: 'begin' });
      let result;
      try {
        result = await callback({ query: (text, params, options) => query(tx, text, params, options) });
      } catch (error) {
        await call({ op: 'end', tx, commit: false }).catch(() => {});
        throw error;
      }
      await call({ op: 'end', tx, commit: true });
      return result;
    },
    prepared: (name, text, params = []) => call({ op: 'prepared', name, text, params }),
    async listen(channel, handler) {
      let handlers = listeners.get(channel);
      if (!handlers) {
        listeners.set(channel, (handlers = new Set()));
        await call({ op: 'listen', channel });
      }
      handlers.add(handler);
      return async () => {
        handlers.delete(handler);
        if (handlers.size > 0 || listeners.get(channel) !== handlers) return;
        listeners.delete(channel);
        if (!closed) await call({ op: 'unlisten', channel });
      };
    },
    opened,
    async close() {
      if (closed) return;
      await call({ op: 'close' });
      fail(closedError(''));
      await worker.terminate();
    },
  };
}

/**
 * The thread's module: beside this one once compiled. Running from the TypeScript sources
 * (vitest), a thread cannot load TypeScript, so it runs the build's copy, which `npm test`
 * makes first; a build older than the thread's sources would test old code, so that is refused
 * (the build info's time, which scripts/build.mjs sets, since `tsc -b` rewrites only what changed).
 */
function threadEntry(): URL {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return new URL('./pglite-thread-entry.js', import.meta.url);
  const sources = path.dirname(here);
  const root = path.resolve(sources, '../..');
  const built = path.join(root, 'dist/src/db/pglite-thread-entry.js');
  const buildInfo = path.join(root, 'dist/tsconfig.tsbuildinfo');
  const newestSource = Math.max(...['pglite-thread-entry', 'pglite-thread', 'pglite-thread-protocol', 'pglite-prepared', 'pglite-wire', 'pglite-image'].map((file) => statSync(path.join(sources, `${file}.ts`)).mtimeMs));
  if (!existsSync(built) || !existsSync(buildInfo) || statSync(buildInfo).mtimeMs < newestSource) {
    throw new Error('dist/src/db/pglite-thread-entry.js is missing or older than its sources in src/db/: run `npm run build` first');
  }
  return pathToFileURL(built);
}
