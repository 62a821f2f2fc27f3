// Named prepared statements on the embedded database, for the statements a run writes on every
// call. PGlite's own `query` parses, plans and describes a statement on every call; here a
// statement is parsed and described once per name, and each execution is one round trip into
// the engine (Bind, Execute, Sync) that reuses the plan. The messages are written and read here
// rather than by PGlite's protocol classes, and its locks are skipped when the caller knows
// nothing else is using the client: a run's checkpoint statement took 330-375 µs through PGlite's
// encoding, decoding and three asynchronous locks, 175-195 µs this way (in-process, 2026-11-28).
import { parse, protocol, type PGlite, type messages as wire } from '@electric-sql/pglite';

export interface PreparedStatements {
  /** Runs the statement at once. Only while nothing else uses the client: no query under way, no transaction open. */
  now<Row>(name: string, text: string, params?: unknown[]): Promise<Row[]>;
  /** Runs it through PGlite's locks, after whatever holds the client (a transaction, another query). */
  queued<Row>(name: string, text: string, params?: unknown[]): Promise<Row[]>;
}

interface Statement {
  text: string;
  name: Uint8Array;
  /** Parameter type ids, from its Describe. */
  types: number[];
  /** Its result columns (none: it returns no rows); a prepared statement's columns never change. */
  columns: { name: string; type: number }[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const BIND = 0x42, EXECUTE = 0x45, SYNC = 0x53; // frontend message codes
const DATA_ROW = 0x44, ERROR = 0x45, NOTIFICATION = 0x41; // backend message codes

/** A byte buffer grown as needed and reused from one statement to the next. */
class Bytes {
  bytes = new Uint8Array(4096);
  view = new DataView(this.bytes.buffer);
  length = 0;

  ensure(more: number): void {
    if (this.length + more <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + more));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }
  byte(value: number): void {
    this.ensure(1);
    this.bytes[this.length++] = value;
  }
  int16(value: number): void {
    this.ensure(2);
    this.view.setInt16(this.length, value);
    this.length += 2;
  }
  int32(value: number): void {
    this.ensure(4);
    this.view.setInt32(this.length, value);
    this.length += 4;
  }
  add(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }
  /** A length-prefixed UTF-8 value, as Bind carries parameters. */
  text(value: string): void {
    this.ensure(4 + value.length * 3);
    const { written } = encoder.encodeInto(value, this.bytes.subarray(this.length + 4));
    this.view.setInt32(this.length, written);
    this.length += 4 + written;
  }
  filled(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }
}

/** `onNotification` receives each NOTIFY the statements commit (PGlite's listeners see only its own queries'). */
export function preparedStatements(client: PGlite, onNotification: (channel: string, payload: string) => void): PreparedStatements {
  const prepared = new Map<string, Statement>();
  const request = new Bytes();
  const response = new Bytes();
  const collect = (data: Uint8Array) => response.add(data);

  /** Sends the messages and gathers every byte of the answer; the engine runs them before this returns. */
  async function exchange(message: Uint8Array): Promise<Uint8Array> {
    response.length = 0;
    // Without its sync to the filesystem (a no-op for a directory or memory) PGlite does all of it synchronously.
    const done = client.execProtocolRawStream(message, { syncToFs: false, onRawData: collect });
    const answer = response.filled().slice();
    await done;
    return answer;
  }

  function messagesOf(answer: Uint8Array): wire.BackendMessage[] {
    const messages: wire.BackendMessage[] = [];
    new protocol.Parser().parse(answer, (message) => messages.push(message));
    return messages;
  }

  async function prepare(name: string, text: string): Promise<Statement> {
    const { serialize } = protocol;
    const parts = [serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()];
    const messages = messagesOf(await exchange(concat(parts)));
    const error = messages.find((m) => m instanceof protocol.messages.DatabaseError);
    if (error) throw error;
    const rows = messages.find((m): m is wire.RowDescriptionMessage => m.name === 'rowDescription');
    const statement = {
      text,
      name: encoder.encode(name),
      types: parse.parseDescribeStatementResults(messages),
      columns: rows?.fields.map((field) => ({ name: field.name, type: field.dataTypeID })) ?? [],
    };
    prepared.set(name, statement);
    return statement;
  }

  async function now<Row>(name: string, text: string, params: unknown[] = []): Promise<Row[]> {
    const known = prepared.get(name);
    if (known && known.text !== text) throw new Error(`prepared statement "${name}" was already prepared with another text`);
    const statement = known ?? (await prepare(name, text));
    return rowsOf<Row>(statement, await exchange(bindExecuteSync(statement, params)));
  }

  // Bind (text parameters, text results) to the unnamed portal, Execute it whole, Sync.
  function bindExecuteSync(statement: Statement, params: unknown[]): Uint8Array {
    request.length = 0;
    request.byte(BIND);
    const lengthAt = request.length;
    request.int32(0);
    request.byte(0);
    request.add(statement.name);
    request.byte(0);
    request.int16(0);
    request.int16(params.length);
    params.forEach((value, i) => {
      if (value === null || value === undefined) return request.int32(-1);
      const serialize = client.serializers[statement.types[i]!];
      request.text(serialize ? serialize(value) : String(value));
    });
    request.int16(0);
    request.view.setInt32(lengthAt, request.length - lengthAt);
    request.byte(EXECUTE);
    request.int32(9);
    request.byte(0);
    request.int32(0);
    request.byte(SYNC);
    request.int32(4);
    return request.filled();
  }

  // The rows, parsed by column type as PGlite's own results are; an error is PGlite's own DatabaseError.
  function rowsOf<Row>(statement: Statement, answer: Uint8Array): Row[] {
    const view = new DataView(answer.buffer, answer.byteOffset, answer.byteLength);
    const rows: Row[] = [];
    for (let at = 0; at < answer.length; at += 1 + view.getInt32(at + 1)) {
      const code = answer[at];
      if (code === DATA_ROW) {
        rows.push(dataRow(statement, answer, view, at + 5) as Row);
      } else if (code === ERROR) {
        throw messagesOf(answer.subarray(at))[0]!;
      } else if (code === NOTIFICATION) {
        const notice = messagesOf(answer.subarray(at, at + 1 + view.getInt32(at + 1)))[0] as wire.NotificationResponseMessage;
        onNotification(notice.channel, notice.payload);
      }
    }
    return rows;
  }

  function dataRow(statement: Statement, answer: Uint8Array, view: DataView, at: number): Record<string, unknown> {
    const row: Record<string, unknown> = {};
    const count = view.getInt16(at);
    at += 2;
    for (let i = 0; i < count; i++) {
      const length = view.getInt32(at);
      at += 4;
      const column = statement.columns[i]!;
      if (length < 0) {
        row[column.name] = null;
        continue;
      }
      const value = decoder.decode(answer.subarray(at, at + length));
      at += length;
      const parser = client.parsers[column.type];
      row[column.name] = parser ? parser(value, column.type) : value;
    }
    return row;
  }

  return {
    now,
    // The same locks as PGlite's `query`: never inside another caller's transaction.
    queued: (name, text, params) => client._runExclusiveTransaction(() => client._runExclusiveQuery(() => now(name, text, params))),
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
