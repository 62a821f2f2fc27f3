// What drizzle-orm's PGlite driver (drizzle-orm/pglite) imports from PGlite, for the bundled
// server only: scripts/bundle-server.mjs resolves that driver's `@electric-sql/pglite` here. The
// main thread reaches the embedded database through its thread (pglite-remote.ts) and never
// makes a PGlite, yet importing the package evaluated all of PGlite's JavaScript on it as well
// as on the thread: 55-95 ms of the main thread's start (docs/performance.md). The database's
// thread, which does make one, imports PGlite itself and hands drizzle the instance.

/** The type oids the driver gives its own parsers (PostgreSQL's built-in oids, fixed for good); a test compares them with PGlite's. */
export const types = { DATE: 1082, TIMESTAMP: 1114, TIMESTAMPTZ: 1184, INTERVAL: 1186 } as const;

/** The driver makes a PGlite only when `drizzle()` is given a data directory instead of a client, which the service never does. */
export class PGlite {
  constructor() {
    throw new Error('drizzle-orm/pglite was asked to open a database itself: pass it the client (src/db/client.ts)');
  }
}
