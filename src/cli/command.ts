// What every admin command is: its name, usage, options and a run function. The table of
// commands is in commands/index.ts; admin.ts parses the command line and prints the result.
import type { ParseArgsConfig } from 'node:util';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { AdminApi } from './remote.js';

export type Flags = Record<string, string | boolean | string[] | undefined>;

export interface Context {
  config: Config;
  /** Opened on first use, closed by admin.ts when the command ends. */
  database(): Promise<Database>;
  /** A secret the command needs (a provider key): from the named variable, else stdin. */
  readSecret(prompt: string, envVariable: string | undefined): Promise<string>;
  /**
   * Set when a running server holds the embedded database: the command goes through that
   * server's admin API instead. Throws, saying what is missing, when it cannot be reached.
   * Commands check their arguments before either path, so a usage error is the same in both.
   */
  server: (() => AdminApi) | null;
}

/** A listing: rows for --json as {data: rows}, printed as a table with these columns. */
export interface Listing {
  data: object[];
  columns: string[];
}

export interface Command {
  name: string;
  /** Positional arguments, as shown in the usage line, e.g. `<username> <file>...`. */
  args: string;
  summary: string;
  /** More lines for `ladder-admin help <command>`. */
  details?: string;
  options?: NonNullable<ParseArgsConfig['options']>;
  run(context: Context, args: string[], flags: Flags): Promise<object | Listing>;
}

export class UsageError extends Error {}

/** Ids are UUIDs; anything else cannot name a row (and the database would refuse it). */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

/** `alice/summarise` -> ['alice', 'summarise'] */
export function ladderRef(value: string | undefined): [string, string] {
  const [author, slug, ...rest] = required(value, 'ladder (author/slug)').split('/');
  if (!author || !slug || rest.length > 0) throw new UsageError(`a ladder is named author/slug, got ${JSON.stringify(value)}`);
  return [author, slug];
}

export function integer(value: string | boolean | string[] | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || !Number.isSafeInteger(n)) throw new UsageError(`${flag} must be a whole number`);
  return n;
}

export function text(value: string | boolean | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A path segment, percent-encoded. */
export const seg = (value: string) => encodeURIComponent(value);
