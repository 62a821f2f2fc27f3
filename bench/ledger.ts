// `npm run bench:ledger`: reports and lists at scale. One account's usage ledger filled with
// BENCH_USAGE_ROWS raw rows over the last 60 days (the hourly totals built from them, as the
// ledger builds them) and BENCH_INSTANCES instances, then, through the real HTTPS routes:
// `GET /v1/usage` for a month by day and by model, and an instance list page (first and
// next); p50 and p95 of BENCH_REQUESTS each. Beside them, the same month read the way reports
// were read before the hourly totals (a scan of the raw rows), for comparison.
// On the embedded database (default sizes 2,000,000 rows, 100,000 instances) and, with
// BENCH_DATABASE_URL, on a fresh database of that PostgreSQL server (20,000,000 and
// 1,000,000). BENCH_SMOKE=1: small sizes, for CI. The last line is the JSON report (bench/report.ts).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { figure, printReport, SMOKE } from './report.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? (SMOKE ? 5 : 40));
const GOALS = { usage_p95_ms: 100, list_p95_ms: 50 };

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};
const round = (ms: number) => Math.round(ms * 100) / 100;

async function get(dispatcher: Agent, url: string, headers: Record<string, string>, method: 'GET' | 'POST' = 'GET', body?: unknown) {
  const res = await request(url, { method, dispatcher, headers: { 'content-type': 'application/json', ...headers }, ...(body ? { body: JSON.stringify(body) } : {}) });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function timed(times: number, work: () => Promise<unknown>) {
  await work(); // warm
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await work();
    ms.push(performance.now() - started);
  }
  return { p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)) };
}

/** A fresh database on the server of `url`, dropped afterwards. */
async function freshPostgres(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `ladder_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  return { url: target.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

async function bench(label: string, databaseUrl: string | null, usageRows: number, instanceRows: number) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-bench-ledger-'));
  const adminToken = randomBytes(24).toString('hex');
  const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', WORKER_CONCURRENCY: '0', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  let tls = new Agent({ connect: { rejectUnauthorized: false } });
  let server: RunningServer | null = null;
  try {
    server = await startServer(config, { logStream: { write: () => true } as never });
    const db = server.app.database;
    const admin = { authorization: `Bearer ${adminToken}` };
    const username = `bench-${randomBytes(3).toString('hex')}`;
    const account = (await get(tls, `${server.url}/v1/admin/accounts`, admin, 'POST', { username })) as { id: string };
    const { key } = (await get(tls, `${server.url}/v1/admin/accounts/${username}/api-keys`, admin, 'POST', {})) as { key: string };
    const auth = { authorization: `Bearer ${key}` };

    const filling = performance.now();
    // Calls spread over the last 60 days, across 4 models, 3 providers, 5 ladders (and none).
    const CHUNK = 1_000_000;
    for (let from = 1; from <= usageRows; from += CHUNK) {
      await db.query(
        `insert into usage_records (created_at, account_id, api_key_id, provider, model, ladder, prompt_tokens, completion_tokens, total_tokens, cost_nanos, outcome)
         select now() - interval '1 day' * (i::float8 / $3 * 60), $1, null, (array['openai','anthropic','google'])[1 + i % 3],
           (array['gpt-4o-mini','gpt-4o','claude-3-5-haiku-latest','gemini-2.5-flash'])[1 + i % 4],
           (array[null,'a/one','a/two','a/three','a/four','a/five'])[1 + i % 6], 100 + i % 50, 20 + i % 30, 120 + i % 50 + i % 30, 100000, 'ok'
         from generate_series($2::int, least($2::int + ${CHUNK} - 1, $3::int)) i`,
        [account.id, from, usageRows],
      );
    }
    await db.query(
      `insert into usage_hourly (account_id, hour, api_key_id, provider, model, ladder, requests, prompt_tokens, completion_tokens, total_tokens, cost_nanos)
       select account_id, date_trunc('hour', created_at, 'UTC'), api_key_id, provider, model, ladder, count(*), sum(prompt_tokens), sum(completion_tokens), sum(total_tokens), sum(cost_nanos)
       from usage_records group by 1, 2, 3, 4, 5, 6`,
    );
    for (let from = 1; from <= instanceRows; from += CHUNK) {
      await db.query(
        `insert into instances (ladder_version, author, slug, account_id, mode, model, input, knobs, status, created_at, finished_at)
         select 1, $4, 'known', $1, 'async', 'gpt-4o-mini', 'q', '{}', 'completed', now() - (i || ' seconds')::interval, now() - (i || ' seconds')::interval
         from generate_series($2::int, least($2::int + ${CHUNK} - 1, $3::int)) i`,
        [account.id, from, instanceRows, username],
      );
    }
    await db.query('analyze');
    const fillSeconds = Math.round((performance.now() - filling) / 100) / 10;
    // A fresh connection pool for the timings: a connection kept from before a fill that held the
    // embedded database's event loop for minutes may be closed under it by the server's keep-alive.
    await tls.close();
    tls = new Agent({ connect: { rejectUnauthorized: false } });

    const now = new Date();
    const monthStart = new Date(now.getTime() - 30 * 86_400_000).toISOString();
    const range = `start=${encodeURIComponent(monthStart)}&end=${encodeURIComponent(now.toISOString())}`;
    const byDay = await timed(REQUESTS, () => get(tls, `${server!.url}/v1/usage?${range}&group_by=day`, auth));
    const byModel = await timed(REQUESTS, () => get(tls, `${server!.url}/v1/usage?${range}&group_by=model`, auth));
    const firstPage = await timed(REQUESTS, () => get(tls, `${server!.url}/v1/pipelines/instances?limit=20`, auth));
    const page = (await get(tls, `${server.url}/v1/pipelines/instances?limit=20`, auth)) as { next_cursor?: string };
    const nextPage = await timed(REQUESTS, () => get(tls, `${server!.url}/v1/pipelines/instances?limit=20${page.next_cursor ? `&after=${encodeURIComponent(page.next_cursor)}` : ''}`, auth));
    // The report as it was read before the hourly totals, straight from the database.
    const rawScan = await timed(Math.min(REQUESTS, 5), () =>
      db.query(
        `select model, count(*), sum(prompt_tokens), sum(completion_tokens), sum(total_tokens), sum(cost_nanos) from usage_records
         where account_id = $1 and created_at >= $2 and created_at < $3 group by model order by model`,
        [account.id, monthStart, now.toISOString()],
      ),
    );
    // What the tables cost per row (heap, indexes and TOAST together), and WAL per ledger row
    // written the way the ledger writes them (batches of 500 through the service's own writer).
    const sizes = await db.query<{ table: string; bytes_per_row: number }>(
      `select relname as table, round(pg_total_relation_size(relid)::numeric / greatest(n_live_tup, 1))::int as bytes_per_row
       from pg_stat_user_tables where relname in ('usage_records', 'usage_hourly', 'instances') order by relname`,
    );
    const walPerRow = databaseUrl ? await ledgerWal(server) : null;
    const figures = { database: label, bytes_per_row: Object.fromEntries(sizes.map((r) => [r.table, Number(r.bytes_per_row)])), wal_bytes_per_ledger_row: walPerRow, usage_rows: usageRows, instances: instanceRows, fill_s: fillSeconds, usage_by_day: byDay, usage_by_model: byModel, list_first_page: firstPage, list_next_page: nextPage, raw_scan_by_model: rawScan };
    console.log(`${label}: ${usageRows.toLocaleString('en')} usage rows, ${instanceRows.toLocaleString('en')} instances (filled in ${fillSeconds} s)`);
    console.log(`  GET /v1/usage, a month by day      p50 ${byDay.p50} ms   p95 ${byDay.p95} ms   (goal p95 <= ${GOALS.usage_p95_ms})`);
    console.log(`  GET /v1/usage, a month by model    p50 ${byModel.p50} ms   p95 ${byModel.p95} ms   (goal p95 <= ${GOALS.usage_p95_ms})`);
    console.log(`  instance list, first page          p50 ${firstPage.p50} ms   p95 ${firstPage.p95} ms   (goal p95 <= ${GOALS.list_p95_ms})`);
    console.log(`  instance list, next page           p50 ${nextPage.p50} ms   p95 ${nextPage.p95} ms   (goal p95 <= ${GOALS.list_p95_ms})`);
    console.log(`  the same month by model from raw rows (before rollups)   p50 ${rawScan.p50} ms`);
    console.log(`  bytes per row: ${sizes.map((r) => `${r.table} ${r.bytes_per_row}`).join(', ')}${walPerRow === null ? '' : `; WAL per ledger row ${walPerRow} bytes`}`);
    return figures;
  } finally {
    await server?.close();
    await tls.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** WAL bytes per usage row, for 20,000 rows recorded and flushed through the service's ledger. */
async function ledgerWal(server: RunningServer): Promise<number> {
  const { app } = server;
  const lsn = async () => (await app.database.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn'))[0]!.lsn;
  const before = await lsn();
  const rows = 20_000;
  const accountId = (await app.database.query<{ id: string }>('select id from accounts limit 1'))[0]!.id;
  for (let i = 0; i < rows; i++) {
    app.usageLedger.record({
      at: Date.now(), accountId, apiKeyId: null, provider: 'openai', model: i % 2 ? 'gpt-4o-mini' : 'gpt-4o', ladder: null, instanceId: null,
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 }, costNanos: 100_000, outcome: 'ok',
    });
    if (i % 500 === 499) await app.usageLedger.flush();
  }
  await app.usageLedger.flush();
  const after = await lsn();
  const [row] = await app.database.query<{ bytes: string }>('select pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text as bytes', [after, before]);
  return Math.round(Number(row!.bytes) / rows);
}

async function main() {
  const results = [await bench('embedded database (PGlite)', null, Number(process.env.BENCH_USAGE_ROWS_EMBEDDED ?? (SMOKE ? 20_000 : 2_000_000)), Number(process.env.BENCH_INSTANCES_EMBEDDED ?? (SMOKE ? 5_000 : 100_000)))];
  if (process.env.BENCH_DATABASE_URL) {
    const fresh = await freshPostgres(process.env.BENCH_DATABASE_URL);
    try {
      results.push(await bench('PostgreSQL', fresh.url, Number(process.env.BENCH_USAGE_ROWS ?? (SMOKE ? 20_000 : 20_000_000)), Number(process.env.BENCH_INSTANCES ?? (SMOKE ? 5_000 : 1_000_000))));
    } finally {
      await fresh.drop();
    }
  }
  printReport(
    'ledger',
    results.flatMap((r) => {
      const db = r.database.startsWith('PostgreSQL') ? 'postgres' : 'embedded';
      return [
        figure(`${db}_usage_month_by_day_p95`, r.usage_by_day.p95, 'ms', { atMost: GOALS.usage_p95_ms }),
        figure(`${db}_usage_month_by_model_p95`, r.usage_by_model.p95, 'ms', { atMost: GOALS.usage_p95_ms }),
        figure(`${db}_instance_list_first_page_p95`, r.list_first_page.p95, 'ms', { atMost: GOALS.list_p95_ms }),
        figure(`${db}_instance_list_next_page_p95`, r.list_next_page.p95, 'ms', { atMost: GOALS.list_p95_ms }),
        figure(`${db}_raw_scan_by_model_p50`, r.raw_scan_by_model.p50, 'ms'),
        ...Object.entries(r.bytes_per_row).map(([table, bytes]) => figure(`${db}_${table}_bytes_per_row`, bytes, 'bytes')),
        ...(r.wal_bytes_per_ledger_row === null ? [] : [figure(`${db}_wal_bytes_per_ledger_row`, r.wal_bytes_per_ledger_row, 'bytes')]),
      ];
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
