// Spend slices (docs/quotas.md, "Spend quotas"): each process holds a slice of each spend
// counter it uses and admits calls from its remainder without a round trip; the remainder goes
// back to the shared counter when idle, when the window or the limit changes, and at shutdown,
// so that another process sharing the database is not refused for long, and never overspends.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createKey, createUser, type TestApp } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';
import { chat, FakeClock, setKeyLimits } from './helpers.js';

// `gpt-spend` prices prompts at 0 and each output token at $0.10: a call with max_tokens 100
// holds $10 while it runs and costs $0.80 (`echo: hi` is 8 completion tokens).
const pricesFile = path.join(mkdtempSync(path.join(tmpdir(), 'quota-slices-')), 'prices.json');
writeFileSync(pricesFile, JSON.stringify({ 'gpt-spend': { input: 0, output: 100_000 } }));
const CALL = { model: 'gpt-spend', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 };
const IDLE_MS = 1000;

let fake: FakeVendor;
let database: Database;
const clock = new FakeClock(Date.UTC(2026, 6, 1, 10, 0, 0));
/** Names of the quota statements (named statements) each app ran, in order. */
const named = new Map<TestApp, string[]>();
const apps: TestApp[] = [];

/** An app ("process") on the shared database whose named statements are recorded. */
async function startApp(): Promise<TestApp> {
  const names: string[] = [];
  const counting: Database = { ...database, query: (text, params, name) => (name?.startsWith('quota_') && names.push(name), database.query(text, params, name)) };
  // The ledger writes only when a test flushes it.
  const app = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl, PRICES_FILE: pricesFile, QUOTA_SPEND_IDLE_MS: String(IDLE_MS), USAGE_FLUSH_MS: '600000', WORKER_CONCURRENCY: '0' }, { database: counting, clock: clock.now });
  named.set(app, names);
  apps.push(app);
  return app;
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  database = await openTestDatabase();
}, 60_000);

afterAll(async () => {
  for (const app of apps) await app.close();
  await database?.close();
  await fake?.close();
});

/** A key with a daily spend limit in USD, usable on every app. */
async function limitedKey(app: TestApp, usdPerDay: number) {
  const user = await createUser(app.app);
  const res = await app.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
  expect(res.statusCode).toBe(201);
  const key = await createKey(app.app, user.username);
  await setKeyLimits(app.app, key.id, { usd_per_day: usdPerDay });
  return { id: key.id, headers: { authorization: `Bearer ${key.key}` } };
}

/** The key's daily counter in the database: spent plus what processes hold, in whole nanos. */
async function counter(keyId: string, windowStart = Date.UTC(2026, 6, 1)): Promise<number> {
  const rows = await database.query<{ amount: number | string }>(
    "select amount from quota_windows where subject_id = $1 and metric = 'usd_day' and window_start = $2",
    [keyId, new Date(windowStart).toISOString()],
  );
  return Number(rows[0]?.amount ?? 0);
}

const NANOS = 1_000_000_000;

describe('spend slices', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startApp();
    b = await startApp();
  });

  it('a call takes its worst case and a slice in one statement; the next calls are admitted from the remainder, without a round trip', async () => {
    const key = await limitedKey(a, 100);
    const names = named.get(a)!;
    names.length = 0;
    expect((await chat(a.app, key.headers, CALL)).statusCode).toBe(200);
    expect(names).toEqual(['quota_spend_hold']);
    // $10 for the call and a slice of $10: $20 held in the counter.
    expect(await counter(key.id)).toBe(20 * NANOS);
    // Each call returns what it did not cost ($9.20) to the remainder: the next ten are paid from it.
    names.length = 0;
    for (let i = 0; i < 10; i++) expect((await chat(a.app, key.headers, CALL)).statusCode).toBe(200);
    expect(names).toEqual([]);
    expect(await counter(key.id)).toBe(20 * NANOS);
    // The ledger's batch adds what they cost ($8.80 for eleven calls) to the counter and takes
    // off as much of their holds, in its own statement (no release of its own): the counter still
    // shows what is spent plus what A holds, also the moment the batch commits (a hold another
    // process took then would have seen the costs twice, $28.80, and refused a call that fits).
    const atCommit: number[] = [];
    const query = a.app.database.query.bind(a.app.database);
    const spy = vi.spyOn(a.app.database, 'query').mockImplementation(async (...args: Parameters<typeof query>) => {
      const result = await query(...args);
      if (args[2] === 'usage_ledger_batch') atCommit.push(await counter(key.id));
      return result as never;
    });
    try {
      await a.app.usageLedger.flush();
    } finally {
      spy.mockRestore();
    }
    expect(atCommit).toEqual([20 * NANOS]);
    expect(names).toEqual([]);
    expect(await counter(key.id)).toBe(20 * NANOS);
  });

  it('near the limit, two processes never overspend; one idling with a slice refuses the other only until it gives the slice back', async () => {
    const key = await limitedKey(a, 60);
    // A holds $20 ($10 for the call, a slice of $10; the call costs $0.80).
    expect((await chat(a.app, key.headers, CALL)).statusCode).toBe(200);
    await a.app.usageLedger.flush();
    expect(await counter(key.id)).toBe(20 * NANOS);
    // B asks for a $45 worst case: $0.80 is spent, but A's idle remainder is held too.
    const big = { ...CALL, max_tokens: 450 };
    const refused = await chat(b.app, key.headers, big);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().error.message).toContain('has spent or holds for calls in flight $20.000000 of its daily limit of $60.000000, and this call may cost up to $45.000000');
    // A second later, A's remainder is back in the counter, and B's call fits.
    clock.advance(IDLE_MS);
    await vi.waitFor(async () => expect(await counter(key.id)).toBe(0.8 * NANOS), { timeout: 5000 });
    expect((await chat(b.app, key.headers, big)).statusCode).toBe(200);
    // Now both call in turn until neither can: what they spent stays within the limit.
    let spent = 1.6;
    for (let round = 0; round < 10; round++) {
      for (const app of [a, b]) {
        const res = await chat(app.app, key.headers, CALL);
        expect([200, 402]).toContain(res.statusCode);
        if (res.statusCode === 200) spent += Number(res.headers['x-ladder-cost-usd']);
        expect(spent * NANOS).toBeLessThanOrEqual(60 * NANOS);
        // Held for calls at most the limit, whatever the ledger has recorded so far.
        expect(await counter(key.id)).toBeLessThanOrEqual(60 * NANOS);
      }
      if (round % 3 === 0) for (const app of [a, b]) await app.app.usageLedger.flush();
    }
    for (const app of [a, b]) await app.app.usageLedger.flush();
    clock.advance(IDLE_MS);
    await vi.waitFor(async () => expect(await counter(key.id)).toBe(Math.round(spent * NANOS)), { timeout: 5000 });
  });

  it('a new window gives the old window\'s remainder back at once', async () => {
    const key = await limitedKey(a, 100);
    clock.ms = Date.UTC(2026, 6, 2, 23, 59, 59, 500);
    expect((await chat(a.app, key.headers, CALL)).statusCode).toBe(200);
    await a.app.usageLedger.flush();
    expect(await counter(key.id, Date.UTC(2026, 6, 2))).toBe(20 * NANOS);
    // Less than the idle time later, in the next day.
    clock.ms = Date.UTC(2026, 6, 3, 0, 0, 0, 100);
    expect((await chat(a.app, key.headers, CALL)).statusCode).toBe(200);
    await vi.waitFor(async () => expect(await counter(key.id, Date.UTC(2026, 6, 2))).toBe(0.8 * NANOS), { timeout: 5000 });
  });

  it('a lowered limit applies to the remainder at once: it goes back, and the call is held against the new limit', async () => {
    const key = await limitedKey(a, 100);
    clock.ms = Date.UTC(2026, 6, 4, 10, 0, 0);
    expect((await chat(a.app, key.headers, CALL)).statusCode).toBe(200);
    // $10.80 of remainder would pay the next call; under a limit of $5 it must not be used.
    await setKeyLimits(a.app, key.id, { usd_per_day: 5 });
    const refused = await chat(a.app, key.headers, CALL);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().error.message).toContain('of its daily limit of $5.000000, and this call may cost up to $10.000000');
    // A call that fits under the new limit still passes.
    expect((await chat(a.app, key.headers, { ...CALL, max_tokens: 40 })).statusCode).toBe(200);
  });

  it('at shutdown, a process gives its remainders back', async () => {
    const c = await startApp();
    const key = await limitedKey(c, 100);
    clock.ms = Date.UTC(2026, 6, 5, 10, 0, 0);
    expect((await chat(c.app, key.headers, CALL)).statusCode).toBe(200);
    expect(await counter(key.id, Date.UTC(2026, 6, 5))).toBe(20 * NANOS);
    await c.close();
    apps.splice(apps.indexOf(c), 1);
    // The ledger's last batch recorded the cost; nothing else is held.
    expect(await counter(key.id, Date.UTC(2026, 6, 5))).toBe(0.8 * NANOS);
  });
});
