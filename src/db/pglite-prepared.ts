// Every statement on the embedded database, as a prepared statement run through PostgreSQL's
// extended protocol. PGlite's own `query` parses and describes a statement on every call, then
// binds and executes it, through its protocol classes and three promise-based locks. Here a
// statement is parsed and described once (under the caller's name, or under one of its own for
// an unnamed text, kept while it is among the most recent), and each execution is one round
// trip into the engine (Bind, Execute, Sync) reusing the plan, its messages written and its
// answer read by src/db/pglite-wire.ts. Measured (2026-11-28): a run's checkpoint in-process
// 330-375 µs through PGlite's path, 175-195 µs this way; a one-row SELECT by key through the
// database's thread, alternated, 450-500 µs as an unnamed `query`, 140-160 µs prepared.
import { parse, protocol, type PGlite, type messages as wire } from '@electric-sql/pglite';
import type { QueryResult } from './pglite-thread-protocol.js';
import { Bytes } from './pglite-bytes.js';
import { bindExecuteSync, messagesOf, readAnswer, type Column } from './pglite-wire.js';

export interface RunOptions {
  rowMode?: 'object' | 'array';
  /** Column types left as the text PostgreSQL sent (drizzle maps dates itself). */
  rawTypes?: number[];
}

export interface PreparedStatements {
  /**
   * Runs a statement at once, prepared under `name` (null: under one of this module's own for its
   * text). Only while nothing else uses the client: no other statement under way and no
   * transaction open, or as a statement of the transaction that holds it.
   */
  now(name: string | null, text: string, params: unknown[], options?: RunOptions): Promise<QueryResult>;
  /** The same through PGlite's locks, after whatever holds the client (a transaction, another query). */
  queued(name: string | null, text: string, params: unknown[], options?: RunOptions): Promise<QueryResult>;
}

interface Statement {
  text: string;
  name: Uint8Array;
  /** Parameter type ids, from its Describe. */
  types: number[];
  /** Its result columns (none: it returns no rows); a prepared statement's columns never change. */
  fields: Column[];
}

/** Unnamed texts kept prepared at once; drizzle's queries are a few dozen shapes, each one text. */
const AUTOMATIC_STATEMENTS = 256;
const AUTOMATIC_PREFIX = 'pglite_auto_';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const identity = (value: string) => value;

/** `onNotification` receives each NOTIFY the statements commit (PGlite's listeners see only its own queries'). */
export function preparedStatements(client: PGlite, onNotification: (channel: string, payload: string) => void): PreparedStatements {
  // Callers' names are a fixed few (the run engine's statements), so they are kept for good.
  const named = new Map<string, Statement>();
  /** Unnamed texts prepared, least recently used first. */
  const automatic = new Map<string, Statement>();
  let nextAutomatic = 0;
  const request = new Bytes();
  const response = new Bytes();
  const collect = (data: Uint8Array) => response.add(data);
  const asText = (value: unknown, type: number) => {
    const serialize = client.serializers[type];
    return serialize ? serialize(value) : String(value);
  };

  /** Sends the messages and gathers every byte of the answer; the engine runs them before this returns. */
  async function exchange(message: Uint8Array): Promise<Uint8Array> {
    // PGlite's own words (src/db/unavailable.ts knows them), for a statement that meets it closing.
    if (!client.ready) throw new Error('PGlite is closed');
    response.length = 0;
    // Without its sync to the filesystem (a no-op for a directory or memory) PGlite does all of it synchronously.
    const done = client.execProtocolRawStream(message, { syncToFs: false, onRawData: collect });
    const answer = response.filled().slice();
    response.clear();
    await done;
    return answer;
  }

  /** Parse and Describe; `close` first drops a statement no longer kept (one round trip for both). */
  async function prepare(name: string, text: string, close?: string): Promise<Statement> {
    const { serialize } = protocol;
    const parts = [serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()];
    if (close) parts.unshift(serialize.close({ type: 'S', name: close }));
    const messages = messagesOf(await exchange(concat(parts)));
    const error = messages.find((m) => m instanceof protocol.messages.DatabaseError);
    if (error) throw error;
    const rows = messages.find((m): m is wire.RowDescriptionMessage => m.name === 'rowDescription');
    return {
      text,
      name: encoder.encode(name),
      types: parse.parseDescribeStatementResults(messages),
      fields: rows?.fields.map((field) => ({ name: field.name, dataTypeID: field.dataTypeID })) ?? [],
    };
  }

  async function statementNamed(name: string, text: string): Promise<Statement> {
    const known = named.get(name);
    if (known && known.text !== text) throw new Error(`prepared statement "${name}" was already prepared with another text`);
    if (known) return known;
    const statement = await prepare(name, text);
    named.set(name, statement);
    return statement;
  }

  // Two statements never prepare at once: the thread handles each request to its end (microtasks
  // included) before it reads the next message, even two of one transaction sent side by side.
  async function statementFor(text: string): Promise<Statement> {
    const known = automatic.get(text);
    if (known) {
      automatic.delete(text);
      automatic.set(text, known);
      return known;
    }
    let evicted: string | undefined;
    if (automatic.size >= AUTOMATIC_STATEMENTS) {
      const [oldestText, oldest] = automatic.entries().next().value!;
      automatic.delete(oldestText);
      evicted = decoder.decode(oldest.name);
    }
    const statement = await prepare(`${AUTOMATIC_PREFIX}${++nextAutomatic}`, text, evicted);
    automatic.set(text, statement);
    return statement;
  }

  async function now(name: string | null, text: string, params: unknown[], { rowMode = 'object', rawTypes = [] }: RunOptions = {}): Promise<QueryResult> {
    const statement = name === null ? await statementFor(text) : await statementNamed(name, text);
    const answered = exchange(bindExecuteSync(request, statement.name, params, statement.types, asText));
    request.clear(); // the engine has read it: an exchange runs before it returns its promise
    const answer = await answered;
    const parsers = statement.fields.map(({ dataTypeID }) => (rawTypes.includes(dataTypeID) ? identity : client.parsers[dataTypeID]));
    return { ...readAnswer(answer, statement.fields, parsers, rowMode, onNotification), fields: statement.fields };
  }

  return {
    now,
    // The same locks as PGlite's `query`: never inside another caller's transaction.
    queued: (name, text, params, options) => client._runExclusiveTransaction(() => client._runExclusiveQuery(() => now(name, text, params, options))),
  };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
