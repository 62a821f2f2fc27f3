// Migration 0008 (exact money): a database holding rows written under 0007, in dollars as
// doubles, keeps every amount, now in whole nanos; float noise is dropped, not carried.
// On PGlite, and on the TEST_DATABASE_URL server when set.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsFolder } from '../../src/db/client.js';
import { emptyPostgres } from '../helpers/spawned-server.js';

/** The migrations folder as it was before 0008: the same files, the journal cut after 0007. */
function foldersUpTo0007(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ladder-migrations-0007-'));
  cpSync(migrationsFolder(), dir, { recursive: true });
  const journalFile = path.join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: Array<{ tag: string }> };
  const end = journal.entries.findIndex((e) => e.tag.startsWith('0008_'));
  expect(end).toBe(8);
  writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, end) }));
  return dir;
}

interface Target {
  query<Row>(text: string, params?: unknown[]): Promise<Row[]>;
  migrate(folder: string): Promise<void>;
  close(): Promise<void>;
}

async function pgliteTarget(): Promise<Target> {
  const client = new PGlite();
  return {
    query: async <Row>(text: string, params?: unknown[]) => (await client.query<Row>(text, params)).rows,
    migrate: (folder) => migratePglite(drizzlePglite(client), { migrationsFolder: folder }),
    close: () => client.close(),
  };
}

async function postgresTarget(serverUrl: string): Promise<Target> {
  const scratch = await emptyPostgres(serverUrl, 'ladder_mig');
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  return {
    query: async <Row>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as Row[],
    migrate: (folder) => migratePg(drizzlePg(client), { migrationsFolder: folder }),
    close: async () => {
      await client.end();
      await scratch.drop();
    },
  };
}

const ACCOUNT = '00000000-0000-4000-8000-000000000001';
const INSTANCE = '00000000-0000-4000-8000-000000000002';
// What float sums stored: the 6.434999999999999e-05 is 64,350 nanos.
const NOISY = 6.434999999999999e-5;

const trace = [
  {
    pass: 1, depth: 0, stepId: 'a',
    nodes: [
      { node: 1, prompt: 'p', output: 'o', survived: true, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, costUsd: NOISY, provider: 'openai', latencyMs: 5 },
      { node: 2, prompt: 'p', output: 'o', survived: true, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, costUsd: 0, reused: true, savedUsd: 0.0000285, provider: 'openai', latencyMs: 0 },
      { node: 3, prompt: 'p', output: '', survived: false, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, costUsd: 0, provider: null, latencyMs: 1, error: 'boom' },
    ],
  },
  { pass: 1, depth: 0, stepId: 'b', nodes: [] },
];

async function seed0007(db: Target): Promise<void> {
  await db.query(`insert into accounts (id, username) values ($1, 'money')`, [ACCOUNT]);
  await db.query(
    `insert into instances (id, ladder_version, author, slug, account_id, mode, model, input, knobs, status, spend_usd, trace)
     values ($1, 1, 'money', 'l', $2, 'async', 'gpt-4o-mini', 'q', '{}', 'completed', $3, $4::text::jsonb)`,
    [INSTANCE, ACCOUNT, NOISY, JSON.stringify(trace)],
  );
  await db.query(
    `insert into instance_calls (instance_id, call_key, output, usage, cost_usd, latency_ms, saved_usd)
     values ($1, '1.a.1', 'o', '{}', $2, 5, null), ($1, '1.a.2', 'o', '{}', 0, 0, 0.0000285)`,
    [INSTANCE, NOISY],
  );
  await db.query(
    `insert into quota_limits (scope, subject_id, requests_per_minute, usd_per_day, usd_per_month) values
       ('account', $1, 10, 2.5, 100000000), ('api_key', $2, null, null, 0.1)`,
    [ACCOUNT, INSTANCE],
  );
  await db.query(
    `insert into quota_windows (scope, subject_id, metric, window_start, amount, last_grant) values
       ('account', $1, 'usd_day', '2026-07-01', $2, 0.000125), ('account', $1, 'tokens', '2026-07-01 10:00', 1234, 600)`,
    [ACCOUNT, NOISY],
  );
  await db.query(
    `insert into usage_records (created_at, account_id, model, prompt_tokens, completion_tokens, total_tokens, cost_usd, outcome)
     values ('2026-07-01 10:00', $1, 'gpt-4o-mini', 429, 0, 429, $2, 'ok'), ('2026-07-01 10:30', $1, 'gpt-4o-mini', 1, 0, 1, 1.5e-7, 'ok')`,
    [ACCOUNT, NOISY],
  );
  await db.query(
    `insert into usage_hourly (account_id, hour, model, requests, prompt_tokens, completion_tokens, total_tokens, cost_usd)
     values ($1, '2026-07-01 10:00', 'gpt-4o-mini', 2, 430, 0, 430, $2)`,
    [ACCOUNT, NOISY + 1.5e-7],
  );
}

const TARGETS: Array<[string, () => Promise<Target>]> = [['PGlite', pgliteTarget]];
if (process.env.TEST_DATABASE_URL) TARGETS.push(['PostgreSQL', () => postgresTarget(process.env.TEST_DATABASE_URL!)]);

describe.each(TARGETS)('migration 0008 on %s', (_name, open) => {
  let db: Target;
  // Raw bigint columns come back as numbers from PGlite and as strings from node-postgres.
  const rows = async (sql: string, params: unknown[] = []) =>
    (await db.query<Record<string, unknown>>(sql, params)).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v])));

  beforeAll(async () => {
    db = await open();
    await db.migrate(foldersUpTo0007());
    await seed0007(db);
    await db.migrate(migrationsFolder());
    // A fresh database and every migration: seconds of initdb on a busy machine.
  }, 180_000);
  afterAll(() => db?.close());

  it('converts the ledger, its hourly totals and the spend counters to whole nanos, float noise dropped', async () => {
    expect(await rows('select prompt_tokens, cost_nanos from usage_records order by created_at')).toEqual([
      { prompt_tokens: 429, cost_nanos: 64_350 },
      { prompt_tokens: 1, cost_nanos: 150 },
    ]);
    expect(await rows('select requests, cost_nanos from usage_hourly')).toEqual([{ requests: 2, cost_nanos: 64_500 }]);
    // Spend counters become nanos; the rate counters already held whole requests and tokens.
    expect(await rows('select metric, amount, last_grant from quota_windows order by metric')).toEqual([
      { metric: 'tokens', amount: 1234, last_grant: 600 },
      { metric: 'usd_day', amount: 64_350, last_grant: 125_000 },
    ]);
  });

  it('converts limits, clamping a monthly limit above the new maximum of $9,000,000', async () => {
    expect(await rows('select scope, requests_per_minute, nanos_per_day, nanos_per_month from quota_limits order by scope')).toEqual([
      { scope: 'account', requests_per_minute: 10, nanos_per_day: 2_500_000_000, nanos_per_month: 9_000_000_000_000_000 },
      { scope: 'api_key', requests_per_minute: null, nanos_per_day: null, nanos_per_month: 100_000_000 },
    ]);
  });

  it('converts runs, their checkpoints and the costs in their stored traces, keeping every other member and the order', async () => {
    expect(await rows('select spend_nanos from instances')).toEqual([{ spend_nanos: 64_350 }]);
    expect(await rows('select call_key, cost_nanos, saved_nanos from instance_calls order by call_key')).toEqual([
      { call_key: '1.a.1', cost_nanos: 64_350, saved_nanos: null },
      { call_key: '1.a.2', cost_nanos: 0, saved_nanos: 28_500 },
    ]);
    const [row] = await db.query<{ trace: typeof trace }>('select trace from instances');
    const nanosOf = (node: Record<string, unknown>, costNanos: number, savedNanos?: number) => {
      const { costUsd: _c, savedUsd: _s, ...rest } = node;
      return { ...rest, costNanos, ...(savedNanos === undefined ? {} : { savedNanos }) };
    };
    expect(row!.trace).toEqual([
      { ...trace[0], nodes: [nanosOf(trace[0]!.nodes[0]!, 64_350), nanosOf(trace[0]!.nodes[1]!, 0, 28_500), nanosOf(trace[0]!.nodes[2]!, 0)] },
      trace[1],
    ]);
    // New rows take the new columns' defaults.
    await db.query(
      `insert into instances (ladder_version, author, slug, account_id, mode, model, input, knobs, status) values (1, 'money', 'l', $1, 'sync', 'm', 'q', '{}', 'pending')`,
      [ACCOUNT],
    );
    expect(await rows(`select spend_nanos from instances where mode = 'sync'`)).toEqual([{ spend_nanos: 0 }]);
  });
});
