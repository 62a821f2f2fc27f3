// Named prepared statements on the embedded database. PGlite's own `query` parses, plans and
// describes the statement on every call, in six round trips into the WebAssembly engine; a run
// checkpoint written that way cost 1-2 ms of event-loop time. Here a statement is parsed and
// described once per name, and each execution is one round trip (Bind, Execute, Sync) that
// reuses the plan: about a third of the time. Its rows are read with the row description the
// statement's Describe gave when it was prepared (a prepared statement's columns never change),
// rather than a Describe of every portal.
import { parse, protocol, type PGlite, type messages as wire } from '@electric-sql/pglite';

export type PreparedQuery = <Row>(name: string, text: string, params?: unknown[]) => Promise<Row[]>;

const { serialize } = protocol;

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

interface Statement {
  text: string;
  types: number[];
  rows: wire.BackendMessage | null;
}

export function createPreparedQuery(client: PGlite): PreparedQuery {
  /** Each statement prepared so far, by name: its parameter type ids and row description (none: it returns no rows). */
  const prepared = new Map<string, Statement>();

  async function prepare(name: string, text: string): Promise<Statement> {
    const { messages } = await client.execProtocol(concat([serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()]));
    const statement = { text, types: parse.parseDescribeStatementResults(messages), rows: messages.find((m) => m.name === 'rowDescription') ?? null };
    prepared.set(name, statement);
    return statement;
  }

  return async <Row>(name: string, text: string, params: unknown[] = []) =>
    // The same locks as PGlite's `query`: never inside another caller's transaction.
    client._runExclusiveTransaction(() =>
      client._runExclusiveQuery(async () => {
        const known = prepared.get(name);
        if (known && known.text !== text) throw new Error(`prepared statement "${name}" was already prepared with another text`);
        const { types, rows } = known ?? (await prepare(name, text));
        const values = params.map((value, i) => {
          if (value === null || value === undefined) return null;
          const serializer = client.serializers[types[i]!];
          return serializer ? serializer(value) : String(value);
        });
        const { messages } = await client.execProtocol(concat([serialize.bind({ statement: name, values: values as string[] }), serialize.execute({}), serialize.sync()]));
        if (rows) messages.unshift(rows);
        return (parse.parseResults(messages, client.parsers)[0]?.rows ?? []) as Row[];
      }),
    );
}
