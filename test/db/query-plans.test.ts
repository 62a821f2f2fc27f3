// Issue 22, item 3: every list and report route reads through an index. On PostgreSQL, with
// tables big enough that the planner means it, each statement a route runs is EXPLAINed with
// its own parameters, and none may scan a table that grows with traffic from end to end.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, build, createUser, type TestApp } from '../helpers/build.js';
import { minimalLadder } from '../ladders/examples.js';

const GROWING = new Set(['usage_records', 'usage_hourly', 'instances', 'instance_events', 'instance_calls', 'usage_batches']);

interface Captured {
  text: string;
  values: unknown[];
}

/** Records the statements sent through node-postgres while `capture` is on. */
function recorder() {
  const statements: Captured[] = [];
  let on = false;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config, values] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
    if (on) statements.push(typeof config === 'string' ? { text: config, values: values ?? [] } : { text: config.text, values: config.values ?? values ?? [] });
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return {
    async during(work: () => Promise<unknown>): Promise<Captured[]> {
      statements.length = 0;
      on = true;
      try {
        await work();
      } finally {
        on = false;
      }
      return [...statements];
    },
    restore: () => void (pg.Client.prototype.query = original),
  };
}

/** Every full scan of a growing table in a JSON plan. */
function seqScans(plan: Record<string, unknown>, found: string[] = []): string[] {
  if (plan['Node Type'] === 'Seq Scan' && GROWING.has(plan['Relation Name'] as string)) found.push(plan['Relation Name'] as string);
  for (const child of (plan.Plans as Record<string, unknown>[] | undefined) ?? []) seqScans(child, found);
  return found;
}

describe.skipIf(!process.env.TEST_DATABASE_URL)('query plans on PostgreSQL', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  let rec: ReturnType<typeof recorder>;
  let instanceId: string;
  beforeAll(async () => {
    t = await build({ WORKER_CONCURRENCY: '0' });
    user = await createUser(t.app, 'planner');
    const other = await createUser(t.app, 'crowd');
    expect((await t.app.inject({ method: 'PUT', url: '/v1/planner/known', headers: user.headers, payload: { config: minimalLadder } })).statusCode).toBe(201);
    const q = (text: string, params: unknown[] = []) => t.database.query(text, params);
    // Many accounts' rows, this account a small share of them, as in a shared deployment.
    for (const [account, n] of [[user.id, 2_000], [other.id, 40_000]] as const) {
      await q(
        `insert into instances (ladder_version, author, slug, account_id, mode, model, input, knobs, status, created_at, finished_at, idempotency_key, request_hash)
         select 1, case when i % 3 = 0 then 'planner' else 'crowd' end, case when i % 2 = 0 then 'known' else 'other' end, $1, 'async', 'gpt-4o-mini', 'q', '{}',
           (array['completed','failed','cancelled','pending','running'])[1 + i % 5], now() - (i || ' minutes')::interval, now() - (i || ' minutes')::interval,
           case when i % 7 = 0 then 'key-' || i end, case when i % 7 = 0 then 'h' end
         from generate_series(1, $2::int) i`,
        [account, n],
      );
      await q(
        `insert into usage_records (created_at, account_id, api_key_id, provider, model, ladder, prompt_tokens, completion_tokens, total_tokens, cost_nanos, outcome)
         select now() - (i || ' seconds')::interval * 30, $1, null, 'openai', 'gpt-4o-mini', null, 1, 2, 3, 1000000, 'ok' from generate_series(1, $2::int * 5) i`,
        [account, n],
      );
      await q(
        `insert into usage_hourly (account_id, hour, model, requests, prompt_tokens, completion_tokens, total_tokens, cost_nanos)
         select $1, date_trunc('hour', now(), 'UTC') - (i || ' hours')::interval, 'gpt-4o-mini', 10, 10, 20, 30, 10000000 from generate_series(1, $2::int / 4) i`,
        [account, n],
      );
    }
    await q(`insert into instance_events (instance_id, seq, type, data) select id, s, 'step.started', '{}' from instances, generate_series(1, 3) s`);
    await q(`insert into instance_calls (instance_id, call_key, output, usage, cost_nanos, latency_ms) select id, '1.s.' || s, 'o', '{}', 0, 1 from instances, generate_series(1, 2) s`);
    instanceId = (await q(`select id from instances where account_id = $1 and status = 'completed' limit 1`, [user.id]))[0]!.id as string;
    await q('analyze');
    rec = recorder();
  }, 120_000);
  afterAll(async () => {
    rec?.restore();
    await t?.close();
  });

  const routes: Array<[string, string, string?]> = [
    ['usage by day, a month with partial-hour edges', '/v1/usage?group_by=day&start=2026-01-01T00:30:00Z&end=2027-01-01T00:00:00Z'],
    ['usage by model', '/v1/usage?group_by=model'],
    ['usage by api key', '/v1/usage?group_by=api_key'],
    ['admin usage', '/v1/admin/accounts/planner/usage?group_by=ladder'],
    ['instance list', '/v1/pipelines/instances'],
    ['instance list by status', '/v1/pipelines/instances?status=failed&limit=100'],
    ['instance list by author and template', '/v1/pipelines/instances?author=planner&template=known'],
    ['instance read', '/v1/pipelines/instances/:id'],
    ['instance trace', '/v1/pipelines/instances/:id/trace'],
    ['instance events', '/v1/pipelines/instances/:id/events'],
  ];
  for (const [name, url] of routes) {
    it(`${name} reads through indexes`, async () => {
      const target = url.replace(':id', instanceId);
      let status = 0;
      const statements = await rec.during(async () => {
        const res = await t.app.inject({ method: 'GET', url: target, headers: url.startsWith('/v1/admin') ? adminHeaders : user.headers });
        status = res.statusCode;
      });
      expect(status).toBe(200);
      const reads = statements.filter((s) => /^\s*(select|with)\b/i.test(s.text) && [...GROWING].some((table) => s.text.includes(table)));
      expect(reads.length, name).toBeGreaterThan(0);
      for (const statement of reads) {
        const [row] = await t.database.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(`explain (format json) ${statement.text}`, statement.values);
        expect(seqScans(row!['QUERY PLAN'][0]!.Plan), statement.text).toEqual([]);
      }
    });
  }

  it('the next page of a list and an idempotent replay read through indexes', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/v1/pipelines/instances?limit=5', headers: user.headers });
    const cursor = first.json().next_cursor ?? first.json().last_id;
    expect(cursor, first.body).toBeTruthy();
    const statements = await rec.during(async () => {
      const page = await t.app.inject({ method: 'GET', url: `/v1/pipelines/instances?limit=5&after=${encodeURIComponent(cursor)}`, headers: user.headers });
      expect(page.statusCode, page.body).toBe(200);
      const replay = await t.app.inject({
        method: 'POST', url: '/v1/pipelines/instances', headers: { ...user.headers, 'idempotency-key': 'key-14' },
        payload: { author: 'planner', template: 'known', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect([202, 409]).toContain(replay.statusCode);
    });
    const reads = statements.filter((s) => /^\s*(select|with)\b/i.test(s.text) && s.text.includes('instances'));
    expect(reads.length).toBeGreaterThan(1);
    for (const statement of reads) {
      const [row] = await t.database.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(`explain (format json) ${statement.text}`, statement.values);
      expect(seqScans(row!['QUERY PLAN'][0]!.Plan), statement.text).toEqual([]);
    }
  });
});
