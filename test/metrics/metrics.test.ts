// Prometheus metrics end to end (issue 10, item 6): the real TLS listener with METRICS_TOKEN,
// the METRICS_PORT listener, fake vendors on real sockets, and a strict text-format parser.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { DOCUMENTED_METRICS, METRICS } from '../../src/metrics/catalog.js';
import { countActiveInstances } from '../../src/metrics/instance-counts.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { minimalLadder } from '../ladders/examples.js';
import { build, createUser, testConfig } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';
import { parsePrometheusText, valueOf, type Family } from '../helpers/prometheus-text.js';

const TOKEN = 'metrics-token-0123456789abcdef';
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const CHAT_ROUTE = '/v1/chat/completions';
const LADDER_ROUTE = '/v1/:author/:ladder/chat/completions';
const hello = [{ role: 'user', content: 'Hello there' }];

let server: RunningServer;
let database: Database;
let openai: FakeVendor;
let openrouter: FakeVendor;
const tls = new Agent({ connect: { rejectUnauthorized: false } });

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: 'sk-metrics-openai-1111' });
  openrouter = await startFakeOpenAI({ apiKey: 'sk-metrics-openrouter-2222' });
  database = await openTestDatabase();
  const config = testConfig({
    PORT: '0',
    METRICS_TOKEN: TOKEN,
    METRICS_PORT: '0',
    PROVIDER_BASE_URL_OPENAI: openai.baseUrl,
    PROVIDER_BASE_URL_OPENROUTER: openrouter.baseUrl,
    PROVIDER_TIMEOUT_MS: '3000',
    // One failure opens a connection's circuit for the rest of the file.
    BREAKER_FAILURE_THRESHOLD: '1',
    BREAKER_COOLDOWN_MS: '600000',
    LADDER_MAX_CONCURRENT_CALLS: '1',
    // The ledger writes when a test asks, so the statement count below sees only requests.
    USAGE_FLUSH_MS: '600000',
    // An API-only process: a queued run stays pending, so the instance gauge has one to count.
    WORKER_CONCURRENCY: '0',
  });
  server = await startServer(config, { database });
});

afterAll(async () => {
  await server?.close();
  await database?.close();
  await openai?.close();
  await openrouter?.close();
  await tls.close();
});

beforeEach(() => {
  openai.reset();
  openrouter.reset();
});

async function get(url: string, headers: Record<string, string> = {}, method: 'GET' | 'POST' = 'GET') {
  const res = await request(url, { method, headers, dispatcher: url.startsWith('https:') ? tls : undefined });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

async function scrape(): Promise<Map<string, Family>> {
  const res = await get(`${server.url}/metrics`, { authorization: `Bearer ${TOKEN}` });
  expect(res.status).toBe(200);
  return parsePrometheusText(res.text);
}

async function call(path: string, key: string, body: unknown, method: 'POST' | 'PUT' = 'POST') {
  const res = await request(`${server.url}${path}`, {
    method,
    dispatcher: tls,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as any };
}

async function user(connections: Array<'openai' | 'openrouter'>) {
  const u = await createUser(server.app);
  for (const [i, provider] of connections.entries()) {
    const api_key = provider === 'openai' ? openai.apiKey : openrouter.apiKey;
    const res = await call('/v1/providers', u.key, { provider, api_key, priority: i * 10 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  return u;
}

const chat = (key: string) => call(CHAT_ROUTE, key, { model: 'gpt-4o-mini', messages: hello });

/** The rows of the table in docs/metrics.md: name, type, labels. */
function documentedTable(): Array<{ name: string; type: string; labels: string[] }> {
  const doc = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
  return [...doc.matchAll(/^\| `(ladder_\w+)` \| (\w+) \|([\w, ]*)\|/gm)].map(([, name, type, labels]) => ({
    name: name!,
    type: type!,
    labels: labels!.split(',').map((l) => l.trim()).filter(Boolean),
  }));
}

describe('switching metrics on', () => {
  it('without METRICS_TOKEN or METRICS_PORT, /metrics is an unknown route and nothing is collected', async () => {
    const t = await build();
    try {
      expect(t.app.metrics.enabled).toBe(false);
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: { message: 'Unknown request URL: GET /metrics.', type: 'invalid_request_error', code: 'unknown_route', param: null } });
    } finally {
      await t.close();
    }
  });

  it('METRICS_TOKEN: no token, a wrong one or another scheme get 401 in the error envelope; the right one gets the text format', async () => {
    const envelope = {
      error: {
        message: 'Missing or invalid metrics token. Send `Authorization: Bearer <METRICS_TOKEN>`.',
        type: 'authentication_error',
        code: 'invalid_metrics_token',
        param: null,
      },
    };
    const refused: Array<Record<string, string>> = [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Bearer ${TOKEN.slice(0, -1)}` }, { authorization: `Basic ${TOKEN}` }];
    for (const headers of refused) {
      const res = await get(`${server.url}/metrics`, headers);
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(res.text)).toEqual(envelope);
    }
    const ok = await get(`${server.url}/metrics`, { authorization: `Bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toBe(CONTENT_TYPE);
    expect(parsePrometheusText(ok.text).get(METRICS.httpRequests.name)?.type).toBe('counter');
    // Another method is 405 like anywhere else.
    expect((await get(`${server.url}/metrics`, { authorization: `Bearer ${TOKEN}` }, 'POST')).status).toBe(405);
  });

  it('METRICS_PORT: plain HTTP on 127.0.0.1, no auth, /metrics only', async () => {
    expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await get(`${server.metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(CONTENT_TYPE);
    expect(parsePrometheusText(res.text).has(METRICS.runs.name)).toBe(true);
    expect((await get(`${server.metricsUrl}/`)).status).toBe(404);
    expect((await get(`${server.metricsUrl}/v1/providers`)).status).toBe(404);
    expect((await get(`${server.metricsUrl}/metrics`, {}, 'POST')).status).toBe(405);
  });

  it('METRICS_PORT alone: the main listener has no /metrics; the local listener closes with the server', async () => {
    const config = testConfig({ PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'silent' });
    const other = await startServer(config, { database });
    const metricsUrl = other.metricsUrl!;
    try {
      expect((await get(`${other.url}/metrics`, { authorization: `Bearer ${TOKEN}` })).status).toBe(404);
      expect((await get(`${metricsUrl}/metrics`)).status).toBe(200);
    } finally {
      await other.close();
    }
    await expect(get(`${metricsUrl}/metrics`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('the metrics', () => {
  it("the server's log destination's dropped lines are counted at each scrape", async () => {
    let dropped = 3;
    const config = testConfig({ PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'silent' });
    const other = await startServer(config, { database, droppedLogLines: () => dropped });
    try {
      const value = async () => valueOf(parsePrometheusText((await get(`${other.metricsUrl}/metrics`)).text), METRICS.logLinesDropped.name);
      expect(await value()).toBe(3);
      dropped = 40;
      expect(await value()).toBe(40);
    } finally {
      await other.close();
    }
  });

  it('docs/metrics.md documents exactly the exported list, and every one is in the scrape with its type and labels', async () => {
    const table = documentedTable();
    expect(table.map((r) => r.name)).toEqual(DOCUMENTED_METRICS.map((m) => m.name));
    for (const row of table) {
      const def = DOCUMENTED_METRICS.find((m) => m.name === row.name)!;
      expect({ type: row.type, labels: row.labels }, row.name).toEqual({ type: def.type, labels: [...def.labels] });
    }
    const families = await scrape();
    for (const def of DOCUMENTED_METRICS) {
      const family = families.get(def.name);
      expect(family, def.name).toBeDefined();
      expect(family!.type, def.name).toBe(def.type);
      expect(family!.help, def.name).toBeTruthy();
    }
    for (const def of Object.values(METRICS)) {
      const family = families.get(def.name)!;
      for (const sample of family.samples) {
        expect(Object.keys(sample.labels).filter((l) => l !== 'le').sort(), def.name).toEqual([...def.labels].sort());
      }
    }
    // Each catalog provider has its circuit gauge from the start.
    expect(valueOf(families, METRICS.circuitState.name, { provider: 'anthropic' })).toBe(0);
    expect(valueOf(families, METRICS.workersBusy.name)).toBe(0);
  });

  it('move as a workload runs: direct calls, a fallback, a failed attempt, an open circuit, ladder runs, a queued run', async () => {
    const before = await scrape();
    const delta = (after: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
      (valueOf(after, name, labels) ?? 0) - (valueOf(before, name, labels) ?? 0);
    let directCost = 0;
    const cost = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ladder-cost-usd']);

    // Two connections: an answer, a fallback (which opens openai's circuit), then a call that skips it.
    const both = await user(['openai', 'openrouter']);
    const first = await chat(both.key);
    expect(first.headers['x-ladder-attempts']).toBe('openai;status=200');
    openai.script({ kind: 'error', status: 500 });
    const fallback = await chat(both.key);
    expect(fallback.headers['x-ladder-attempts']).toBe('openai;status=500;reason=server_error, openrouter;status=200');
    const skipping = await chat(both.key);
    expect(skipping.headers['x-ladder-attempts']).toBe('openai;reason=circuit_open, openrouter;status=200');
    directCost += cost(first) + cost(fallback) + cost(skipping);

    // One connection that fails: the call's last attempt is an error, and the caller gets 502.
    const lone = await user(['openai']);
    openai.script({ kind: 'error', status: 500 });
    expect((await chat(lone.key)).status).toBe(502);

    // Ladder runs: one completes (two model calls), one fails at its first call.
    const author = await user(['openai']);
    expect((await call(`/v1/${author.username}/metrics-ladder`, author.key, { config: minimalLadder }, 'PUT')).status).toBeLessThan(300);
    const run = await call(`/v1/${author.username}/metrics-ladder/chat/completions`, author.key, { model: 'gpt-4o-mini', messages: hello });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    openai.script({ kind: 'error', status: 500 });
    const failedRun = await call(`/v1/${author.username}/metrics-ladder/chat/completions`, author.key, { model: 'gpt-4o-mini', messages: hello });
    expect(failedRun.status).toBe(502);

    // A queued run stays pending (no worker in this process); the instance gauge is read fresh.
    server.app.metrics.watchInstances(() => countActiveInstances(server.app.db), 0); // the 5 s cache has its own test
    const queued = await call('/v1/pipelines/instances', author.key, { author: author.username, template: 'metrics-ladder', model: 'gpt-4o-mini', messages: hello });
    expect(queued.status).toBe(202);
    expect((await get(`${server.url}/no-such-thing`)).status).toBe(404);

    const after = await scrape();
    const { httpRequests, httpDuration, overhead, attempts, attemptDuration, circuitState, openCircuits, runs, modelCalls, spend, instances } = METRICS;

    expect(delta(after, httpRequests.name, { method: 'POST', route: CHAT_ROUTE, status: '200' })).toBe(3);
    expect(delta(after, httpRequests.name, { method: 'POST', route: CHAT_ROUTE, status: '502' })).toBe(1);
    expect(delta(after, httpRequests.name, { method: 'POST', route: LADDER_ROUTE, status: '200' })).toBe(1);
    expect(delta(after, httpRequests.name, { method: 'POST', route: LADDER_ROUTE, status: '502' })).toBe(1);
    expect(delta(after, httpRequests.name, { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(delta(after, `${httpDuration.name}_count`, { method: 'POST', route: CHAT_ROUTE })).toBe(4);
    // Every direct call carries server-timing, failed ones too; the service's share is positive and small.
    expect(delta(after, `${overhead.name}_count`, { route: CHAT_ROUTE })).toBe(4);
    const overheadSum = delta(after, `${overhead.name}_sum`, { route: CHAT_ROUTE });
    expect(overheadSum).toBeGreaterThan(0);
    expect(overheadSum).toBeLessThan(delta(after, `${httpDuration.name}_sum`, { method: 'POST', route: CHAT_ROUTE }));

    expect(delta(after, attempts.name, { provider: 'openai', outcome: 'ok', reason: 'none' })).toBe(3); // a direct call, two ladder calls
    expect(delta(after, attempts.name, { provider: 'openai', outcome: 'fallback', reason: 'server_error' })).toBe(1);
    expect(delta(after, attempts.name, { provider: 'openai', outcome: 'skipped', reason: 'circuit_open' })).toBe(1);
    expect(delta(after, attempts.name, { provider: 'openai', outcome: 'error', reason: 'server_error' })).toBe(2); // direct and ladder
    expect(delta(after, attempts.name, { provider: 'openrouter', outcome: 'ok', reason: 'none' })).toBe(2);
    expect(delta(after, `${attemptDuration.name}_count`, { provider: 'openai', outcome: 'ok' })).toBe(3);
    expect(delta(after, `${attemptDuration.name}_count`, { provider: 'openai', outcome: 'fallback' })).toBe(1);

    // Three openai connections failed once each: their circuits are open.
    expect(valueOf(before, circuitState.name, { provider: 'openai' })).toBe(0);
    expect(valueOf(after, circuitState.name, { provider: 'openai' })).toBe(2);
    expect(valueOf(after, openCircuits.name, { provider: 'openai' })).toBe(3);
    expect(valueOf(after, circuitState.name, { provider: 'openrouter' })).toBe(0);

    expect(delta(after, runs.name, { mode: 'sync', status: 'completed' })).toBe(1);
    expect(delta(after, runs.name, { mode: 'sync', status: 'failed' })).toBe(1);
    expect(delta(after, modelCalls.name, { kind: 'direct', outcome: 'ok' })).toBe(3);
    expect(delta(after, modelCalls.name, { kind: 'direct', outcome: 'error' })).toBe(1);
    expect(delta(after, modelCalls.name, { kind: 'ladder', outcome: 'ok' })).toBe(2);
    expect(delta(after, modelCalls.name, { kind: 'ladder', outcome: 'error' })).toBe(1);
    expect(delta(after, spend.name, { kind: 'direct' })).toBeCloseTo(directCost, 7);
    expect(delta(after, spend.name, { kind: 'ladder' })).toBeCloseTo(cost(run), 7);
    expect(valueOf(after, instances.name, { status: 'pending' })).toBe(1);
    expect(valueOf(after, instances.name, { status: 'running' })).toBe(0);

    // No label carries an account, a key or a raw URL.
    const secrets = [both, lone, author].flatMap((u) => [u.username, u.key.slice(-12)]);
    for (const family of after.values()) {
      for (const sample of family.samples) {
        for (const value of Object.values(sample.labels)) {
          for (const secret of secrets) expect(value).not.toContain(secret);
          expect(value).not.toContain('no-such-thing');
        }
      }
    }
  });

  it('a ladder run in progress is a running instance', async () => {
    server.app.metrics.watchInstances(() => countActiveInstances(server.app.db), 0);
    const author = await user(['openai']);
    await call(`/v1/${author.username}/slow`, author.key, { config: minimalLadder }, 'PUT');
    openai.script({ kind: 'delay', ms: 1500 });
    const running = call(`/v1/${author.username}/slow/chat/completions`, author.key, { model: 'gpt-4o-mini', messages: hello });
    let seen = 0;
    for (let i = 0; i < 40 && seen === 0; i++) {
      seen = valueOf(await scrape(), METRICS.instances.name, { status: 'running' }) ?? 0;
      if (seen === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(seen).toBe(1);
    expect((await running).status).toBe(200);
    expect(valueOf(await scrape(), METRICS.instances.name, { status: 'running' })).toBe(0);
  });

  it('the workers’ API: busy workers and background runs', async () => {
    const before = await scrape();
    server.app.metrics.workerBusy(3);
    server.app.metrics.runFinished('async', 'completed');
    const after = await scrape();
    expect(valueOf(after, METRICS.workersBusy.name)).toBe(3);
    expect((valueOf(after, METRICS.runs.name, { mode: 'async', status: 'completed' }) ?? 0) - (valueOf(before, METRICS.runs.name, { mode: 'async', status: 'completed' }) ?? 0)).toBe(1);
    server.app.metrics.workerBusy(0);
  });

  it('the event loop is measured (prom-client default metrics, with the prefix)', async () => {
    const families = await scrape();
    expect(valueOf(families, 'ladder_nodejs_eventloop_lag_p99_seconds')).toBeGreaterThan(0);
    expect(families.get('ladder_nodejs_gc_duration_seconds')?.type).toBe('histogram');
    expect(valueOf(families, 'ladder_process_cpu_seconds_total')).toBeGreaterThan(0);
  });
});

describe('the hot path with metrics on', () => {
  it('after a warm-up call, direct calls make no database round trip; a scrape reads the instance counts', async () => {
    const u = await user(['openai']);
    const client = (server.app.db as unknown as { $client: unknown }).$client as Record<string, (...args: unknown[]) => unknown>;
    // `connect`: a PostgreSQL pool hands out a client for each transaction.
    const counted = ['query', 'exec', 'transaction', 'connect'].filter((name) => typeof client[name] === 'function');
    const originals = Object.fromEntries(counted.map((name) => [name, client[name]!]));
    let statements = 0;
    for (const name of counted) {
      client[name] = function (this: unknown, ...args: unknown[]) {
        statements += 1;
        return originals[name]!.apply(this, args);
      };
    }
    try {
      expect((await chat(u.key)).status).toBe(200);
      await server.app.usageLedger.flush();
      statements = 0;
      for (let i = 0; i < 5; i++) expect((await chat(u.key)).status).toBe(200);
      expect(statements).toBe(0);
      server.app.metrics.watchInstances(() => countActiveInstances(server.app.db), 0);
      await scrape();
      expect(statements).toBeGreaterThan(0);
    } finally {
      for (const name of counted) client[name] = originals[name]!;
    }
  });
});
