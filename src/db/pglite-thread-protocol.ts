// The messages between the main thread and the thread that holds the embedded database
// (src/db/pglite-thread.ts, src/db/pglite-remote.ts). Values cross by structured clone, so an
// error travels as its message and own fields (SQLSTATE `code`, `constraint`, ...) and is
// rebuilt on the other side, where src/db/errors.ts reads it as it would PGlite's own.

export interface OpenOptions {
  /** The `pgdata` folder; null keeps the database in memory. */
  dir: string | null;
  /** A `dumpDataDir()` snapshot to start an in-memory database from. */
  snapshot: Blob | null;
  /** Migrations to apply before any statement is served; null leaves the schema as it is. */
  migrationsFolder: string | null;
  /** Where a new `dir` may be created from a prebuilt image (src/db/pglite-image.ts); null: initdb. */
  imageFolder: string | null;
}

/** How this start made a new embedded database; null when its files were there already. */
export type Created = { from: 'image' } | { from: 'initdb'; imageSkipped: string } | null;

export type Request =
  | { op: 'query'; text: string; params: unknown[]; rowMode: 'object' | 'array'; rawTypes: number[]; tx: number | null }
  | { op: 'prepared'; name: string; text: string; params: unknown[] }
  | { op: 'begin' }
  | { op: 'end'; tx: number; commit: boolean }
  | { op: 'listen'; channel: string }
  | { op: 'unlisten'; channel: string }
  | { op: 'close' };

export interface QueryResult {
  rows: unknown[];
  affectedRows?: number;
  fields: { name: string; dataTypeID: number }[];
}

/** Thread to main: the answer to request `id`, a notification, or the end of start-up. */
export type Reply =
  | { id: number; value: unknown }
  | { id: number; error: SerializedError }
  | { notify: string; payload: string }
  | { ready: true; created: Created }
  | { ready: false; error: SerializedError };

export interface SerializedError {
  name: string;
  message: string;
  stack: string | undefined;
  fields: Record<string, string | number | boolean>;
}

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), stack: undefined, fields: {} };
  const fields: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return { name: error.name, message: error.message, stack: error.stack, fields };
}

export function deserializeError(serialized: SerializedError): Error {
  const error = Object.assign(new Error(serialized.message), serialized.fields);
  error.name = serialized.name;
  if (serialized.stack) error.stack = serialized.stack;
  return error;
}
