// Issue 10, item 3: three app instances, each with its own connection pool and its own local
// shares, on one database, hammer one limited key at once. What they admit together in a
// window never exceeds the limit by more than docs/quotas.md's bound (0 requests; for tokens,
// the excess of calls over their estimate, here 0), nor falls short of it by more than the
// shares the instances may still hold (N x 2 x share).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { formatUsd, nanosOf } from '../../src/money.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createKey, createUser, type TestApp } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';
import { chat, FakeClock, setKeyLimits } from './helpers.js';

const N = 3;
const SHARES_PER_WINDOW = 10;
const PER_INSTANCE = 25;
// Issue 16, item 7: a USD/day limit under 50 concurrent calls per instance.
const SPEND_CONCURRENCY = 50;
// `gpt-spend` costs $1 per million prompt tokens and $250 per million completion tokens: an `hi`
// call with max_tokens 10 costs $0.002002 (2 + 8 tokens) and holds at most $0.002616 while it
// runs (a prompt bound of 116 tokens and 10 completion tokens).
const pricesFile = path.join(mkdtempSync(path.join(tmpdir(), 'quota3-prices-')), 'prices.json');
writeFileSync(pricesFile, JSON.stringify({ 'gpt-spend': { input: 1, output: 250 } }));

let fake: FakeVendor;
const clock = new FakeClock();
const databases: Database[] = [];
const apps: TestApp[] = [];
let dropDatabase: (() => Promise<void>) | null = null;

async function adminQuery(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) {
    // Our own database, migrated by whichever instance gets the migration lock first.
    const name = `ladder_q3_${randomBytes(5).toString('hex')}`;
    await adminQuery(serverUrl, `create database ${name}`);
    dropDatabase = () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    databases.push(...(await Promise.all(Array.from({ length: N }, () => openDatabase({ url: url.toString(), dataDir: null })))));
  } else {
    // The embedded database cannot be shared by processes; the instances share one handle.
    const shared = await openTestDatabase();
    databases.push(shared, shared, shared);
  }
  for (const database of databases) {
    apps.push(await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl, QUOTA_SHARES_PER_WINDOW: String(SHARES_PER_WINDOW), PRICES_FILE: pricesFile }, { database, clock: clock.now }));
  }
}, 120_000);

afterAll(async () => {
  for (const app of apps) await app.close();
  for (const database of new Set(databases)) await database.close();
  await dropDatabase?.();
  await fake?.close();
});

async function limitedKey(limits: { requests_per_minute?: number; tokens_per_minute?: number; usd_per_day?: number }) {
  const app = apps[0]!.app;
  const user = await createUser(app);
  const res = await app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
  expect(res.statusCode).toBe(201);
  const key = await createKey(app, user.username);
  await setKeyLimits(app, key.id, limits);
  return { id: key.id, headers: { authorization: `Bearer ${key.key}` } };
}

/** Every instance sends PER_INSTANCE calls at once; resolves with every answer. */
async function hammer(headers: Record<string, string>) {
  const answers = await Promise.all(apps.flatMap(({ app }) => Array.from({ length: PER_INSTANCE }, () => chat(app, headers))));
  for (const a of answers) expect([200, 429]).toContain(a.statusCode);
  return answers;
}

describe(`${N} instances on one database`, () => {
  it('requests per minute: together they admit at most the limit, then again after the window resets', async () => {
    const limit = 40;
    const share = Math.ceil(limit / SHARES_PER_WINDOW);
    const key = await limitedKey({ requests_per_minute: limit });
    clock.nextMinute();
    for (let window = 0; window < 2; window++) {
      const before = fake.requests.length;
      const answers = await hammer(key.headers);
      const admitted = answers.filter((a) => a.statusCode === 200).length;
      const overshoot = Math.max(0, admitted - limit);
      expect(overshoot).toBeLessThanOrEqual(0);
      expect(admitted).toBeGreaterThanOrEqual(limit - N * 2 * share);
      expect(fake.requests.length - before).toBe(admitted);
      const refused = answers.find((a) => a.statusCode === 429)!;
      expect(refused.headers['retry-after']).toBeDefined();
      expect(refused.json().error.code).toBe('rate_limit_exceeded');
      const [row] = await apps[0]!.database.query<{ amount: number | string }>(
        "select amount from quota_windows where subject_id = $1 and metric = 'requests' and window_start = $2",
        [key.id, new Date(Math.floor(clock.ms / 60_000) * 60_000)],
      );
      expect(Number(row!.amount)).toBeLessThanOrEqual(limit); // bigint: a string from node-postgres
      clock.nextMinute();
    }
  });

  it('tokens per minute: the tokens of admitted calls stay within the limit when calls use no more than their estimate', async () => {
    const limit = 330;
    const key = await limitedKey({ tokens_per_minute: limit });
    clock.nextMinute();
    const answers = await hammer(key.headers);
    const ok = answers.filter((a) => a.statusCode === 200);
    const tokens = ok.reduce((acc, a) => acc + a.json().usage.total_tokens, 0);
    // Each call is charged 11 and uses 10 tokens.
    expect(tokens).toBeLessThanOrEqual(limit);
    expect(ok.length).toBeGreaterThanOrEqual(Math.floor((limit - N * 2 * Math.ceil(limit / SHARES_PER_WINDOW)) / 11));
  });

  it(`USD per day at ${SPEND_CONCURRENCY} concurrent calls per instance: the spend of admitted calls stays within the limit`, async () => {
    const limit = 0.05;
    const key = await limitedKey({ usd_per_day: limit });
    clock.ms = Date.UTC(2026, 2, 20, 10, 0, 0);
    const body = { model: 'gpt-spend', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };
    const answers = await Promise.all(apps.flatMap(({ app }) => Array.from({ length: SPEND_CONCURRENCY }, () => chat(app, key.headers, body))));
    for (const a of answers) expect([200, 402]).toContain(a.statusCode);
    const ok = answers.filter((a) => a.statusCode === 200);
    // In whole nanos, as the service counts: the sums are exact.
    const spent = ok.reduce((acc, a) => acc + nanosOf(Number(a.headers['x-ladder-cost-usd'])), 0);
    const limitNanos = nanosOf(limit);
    const worstCall = (116 * 1 + 10 * 250) * 1000;
    for (const a of ok) expect(a.headers['x-ladder-cost-usd']).toBe('0.002002000');
    // docs/quotas.md: at most one call's worst case per process over the limit; here, none.
    expect(spent).toBeLessThanOrEqual(limitNanos);
    // Holds are worst cases ($0.002616 each, $0.0026 more than they cost): 19 fit in $0.05,
    // less what the other processes' slices may hold unused (docs/quotas.md, "Slices"): each
    // less than one worst case plus a quarter of what remained at its last top-up.
    const othersUnused = (N - 1) * worstCall + limitNanos * (1 - 0.75 ** (N - 1));
    expect(ok.length).toBeGreaterThanOrEqual(Math.floor((limitNanos - othersUnused) / worstCall));
    console.log(`usd_per_day $${limit}, ${N} instances x ${SPEND_CONCURRENCY} concurrent calls: ${ok.length} admitted, spent ${formatUsd(spent)} (${(spent / limitNanos).toFixed(2)}x the limit)`);
    // Once every ledger has written its batch and every slice, idle for a second, has gone
    // back, the shared counter holds exactly what was spent.
    for (const { app } of apps) await app.usageLedger.flush();
    clock.advance(1000);
    await vi.waitFor(async () => {
      const [row] = await apps[0]!.database.query<{ amount: number | string }>(
        "select amount from quota_windows where subject_id = $1 and metric = 'usd_day'",
        [key.id],
      );
      expect(Number(row!.amount)).toBe(spent);
    }, { timeout: 5000 });
  });
});
