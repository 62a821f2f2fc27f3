// Background instances straight in the database, for the worker's tests (the HTTP route
// that creates them lives elsewhere), and a wait for a row to reach a state.
import type { Database } from '../../src/db/client.js';

export interface PendingFields {
  ladderId: string | null;
  ladderVersion: number;
  author: string;
  slug: string;
  accountId: string;
  model?: string;
  input: string;
  knobs?: Record<string, number>;
}

/** A `pending` async instance, as the start route records one; returns its id. */
export async function insertPending(database: Pick<Database, 'query'>, fields: PendingFields, extra: Record<string, unknown> = {}): Promise<string> {
  const columns: Record<string, unknown> = {
    ladder_id: fields.ladderId,
    ladder_version: fields.ladderVersion,
    author: fields.author,
    slug: fields.slug,
    account_id: fields.accountId,
    mode: 'async',
    model: fields.model ?? 'gpt-4o-mini',
    input: fields.input,
    knobs: JSON.stringify(fields.knobs ?? {}),
    status: 'pending',
    ...extra,
  };
  const names = Object.keys(columns);
  const [row] = await database.query<{ id: string }>(
    `insert into instances (${names.join(', ')}) values (${names.map((n, i) => (n === 'knobs' ? `$${i + 1}::text::jsonb` : `$${i + 1}`)).join(', ')}) returning id`,
    Object.values(columns),
  );
  return row!.id;
}

export type Row = Record<string, any>;

export async function instance(database: Pick<Database, 'query'>, id: string): Promise<Row> {
  const [row] = await database.query<Row>('select * from instances where id = $1', [id]);
  if (!row) throw new Error(`no instance ${id}`);
  return row;
}

/** Polls until `check` passes (returns a truthy value), or fails after `timeoutMs`. */
export async function waitFor<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function waitForStatus(database: Pick<Database, 'query'>, id: string, statuses: string[], timeoutMs = 15_000): Promise<Row> {
  return waitFor(async () => {
    const row = await instance(database, id);
    return statuses.includes(row.status) ? row : null;
  }, timeoutMs, `instance ${id} to be ${statuses.join(' or ')}`);
}

export async function events(database: Pick<Database, 'query'>, id: string): Promise<Array<{ seq: number; type: string; data: Record<string, any> }>> {
  return database.query('select seq, type, data from instance_events where instance_id = $1 order by seq', [id]);
}

export async function callKeys(database: Pick<Database, 'query'>, id: string): Promise<string[]> {
  return (await database.query<{ call_key: string }>('select call_key from instance_calls where instance_id = $1 order by created_at, call_key', [id])).map((r) => r.call_key);
}
