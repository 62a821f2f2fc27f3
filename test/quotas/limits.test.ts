// Issue 10, items 1-2: limits per account and per key, at their boundaries, with an injected
// clock; the OpenAI rate headers on success and on 429; the 402 message of a spend quota.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders } from '../helpers/build.js';
import { chat, HI, quotaUser, setAccountLimits, setKeyLimits, startQuotaHarness, type QuotaHarness } from './helpers.js';

// One token costs $0.10, so an `hi` call (10 tokens) costs exactly $1.
const pricesFile = path.join(mkdtempSync(path.join(tmpdir(), 'quota-prices-')), 'prices.json');
writeFileSync(pricesFile, JSON.stringify({ 'gpt-4o-mini': { input: 100_000, output: 100_000 } }));

let h: QuotaHarness;
beforeAll(async () => {
  h = await startQuotaHarness({ PRICES_FILE: pricesFile });
});
afterAll(async () => {
  await h?.close();
});

describe('admin: limits of accounts and keys', () => {
  it('sets, shows and lists limits; absent members are unlimited; bad values are 400', async () => {
    const user = await quotaUser(h);
    expect(await setAccountLimits(h.app, user.username, { requests_per_minute: 100, usd_per_month: 50 })).toEqual({
      requests_per_minute: 100, tokens_per_minute: null, usd_per_day: null, usd_per_month: 50,
    });
    const shown = await h.app.inject({ method: 'GET', url: `/v1/admin/accounts/${user.username}/limits`, headers: adminHeaders });
    expect(shown.json()).toMatchObject({ requests_per_minute: 100, usd_per_month: 50 });

    await setKeyLimits(h.app, user.keyId, { tokens_per_minute: 5000 });
    const list = await h.app.inject({ method: 'GET', url: `/v1/admin/accounts/${user.username}/api-keys`, headers: adminHeaders });
    const keys = list.json<{ data: Array<{ id: string; limits: object }> }>().data;
    expect(keys.find((k) => k.id === user.keyId)!.limits).toEqual({ requests_per_minute: null, tokens_per_minute: 5000, usd_per_day: null, usd_per_month: null });
    expect(keys.find((k) => k.id === user.second.id)!.limits).toEqual({ requests_per_minute: null, tokens_per_minute: null, usd_per_day: null, usd_per_month: null });

    const bad = await h.app.inject({ method: 'PUT', url: `/v1/admin/api-keys/${user.keyId}/limits`, headers: adminHeaders, payload: { requests_per_minute: 0 } });
    expect(bad.statusCode).toBe(400);
    const unknown = await h.app.inject({ method: 'PUT', url: '/v1/admin/api-keys/00000000-0000-4000-8000-000000000000/limits', headers: adminHeaders, payload: {} });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('api_key_not_found');
  });
});

describe('requests per minute', () => {
  it('key: the call past the limit gets 429 with retry-after and OpenAI headers; the next minute admits again', async () => {
    const user = await quotaUser(h);
    await setKeyLimits(h.app, user.keyId, { requests_per_minute: 3 });
    h.clock.nextMinute();
    h.clock.advance(15_000);
    for (const remaining of [2, 1, 0]) {
      const ok = await chat(h.app, user.headers);
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.headers['x-ratelimit-limit-requests']).toBe('3');
      expect(ok.headers['x-ratelimit-remaining-requests']).toBe(String(remaining));
      expect(ok.headers['x-ratelimit-reset-requests']).toBe('45s');
      expect(ok.headers['x-ratelimit-limit-tokens']).toBeUndefined();
    }
    const refused = await chat(h.app, user.headers);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(refused.json().error.message).toContain(`requests per minute on API key ${user.keyId}: limit 3`);
    expect(refused.headers['retry-after']).toBe('45');
    expect(refused.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(refused.headers['x-ratelimit-reset-requests']).toBe('45s');
    expect(h.fake.requests.filter((r) => r.headers.authorization === `Bearer ${h.fake.apiKey}`).length).toBeGreaterThanOrEqual(3);

    // The other key of the account is not limited.
    expect((await chat(h.app, user.second.headers)).statusCode).toBe(200);

    h.clock.nextMinute();
    const again = await chat(h.app, user.headers);
    expect(again.statusCode).toBe(200);
    expect(again.headers['x-ratelimit-remaining-requests']).toBe('2');
    expect(again.headers['x-ratelimit-reset-requests']).toBe('1m0s');
  });

  it('account: all keys share it', async () => {
    const user = await quotaUser(h);
    await setAccountLimits(h.app, user.username, { requests_per_minute: 2 });
    h.clock.nextMinute();
    expect((await chat(h.app, user.headers)).statusCode).toBe(200);
    expect((await chat(h.app, user.second.headers)).statusCode).toBe(200);
    const refused = await chat(h.app, user.second.headers);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toContain(`account "${user.username}"`);
    expect(refused.headers['retry-after']).toBe('60');
    h.clock.nextMinute();
    expect((await chat(h.app, user.headers)).statusCode).toBe(200);
  });
});

describe('tokens per minute', () => {
  it('key: the estimate is charged up front and settled to the real usage; the call that would not fit gets 429', async () => {
    const user = await quotaUser(h);
    await setKeyLimits(h.app, user.keyId, { tokens_per_minute: 25 });
    h.clock.nextMinute();
    const first = await chat(h.app, user.headers);
    expect(first.statusCode).toBe(200);
    expect(first.json().usage.total_tokens).toBe(10);
    expect(first.headers['x-ratelimit-limit-tokens']).toBe('25');
    expect(first.headers['x-ratelimit-remaining-tokens']).toBe('15');
    expect(first.headers['x-ratelimit-reset-tokens']).toBe('1m0s');
    const second = await chat(h.app, user.headers);
    expect(second.headers['x-ratelimit-remaining-tokens']).toBe('5');
    // 5 tokens remain; the next call is estimated at 11.
    const refused = await chat(h.app, user.headers);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toContain('tokens per minute');
    expect(refused.json().error.message).toContain('estimated at 11 tokens, 5 remain');
    expect(refused.headers['x-ratelimit-remaining-tokens']).toBe('5');
    // A smaller call still fits.
    const small = await chat(h.app, user.headers, { ...HI, max_tokens: 4 });
    expect(small.statusCode).toBe(200);
    h.clock.nextMinute();
    expect((await chat(h.app, user.headers)).statusCode).toBe(200);
  });

  it('account: keys share it', async () => {
    const user = await quotaUser(h);
    await setAccountLimits(h.app, user.username, { tokens_per_minute: 21 });
    h.clock.nextMinute();
    expect((await chat(h.app, user.headers)).statusCode).toBe(200);
    expect((await chat(h.app, user.second.headers)).statusCode).toBe(200);
    expect((await chat(h.app, user.second.headers)).statusCode).toBe(429);
    h.clock.nextMinute();
    expect((await chat(h.app, user.second.headers)).statusCode).toBe(200);
  });
});

describe('spend quotas', () => {
  it('key, daily: the call that crosses the limit passes, the next gets 402 naming the limit, the spend and the reset', async () => {
    const user = await quotaUser(h);
    await setKeyLimits(h.app, user.keyId, { usd_per_day: 2.5 });
    h.clock.ms = Date.UTC(2026, 2, 11, 23, 0, 0);
    for (let i = 0; i < 3; i++) {
      const ok = await chat(h.app, user.headers);
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.headers['x-ladder-cost-usd']).toBe('1.00000000');
    }
    const refused = await chat(h.app, user.headers);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().error).toMatchObject({ type: 'insufficient_quota', code: 'quota_exceeded' });
    expect(refused.json().error.message).toBe(
      `Spend quota exceeded: API key ${user.keyId} has spent $3.000000 of its daily limit of $2.5 (UTC day); the quota resets at 2026-03-12T00:00:00.000Z.`,
    );
    // Another key of the account is not held by this key's quota.
    expect((await chat(h.app, user.second.headers)).statusCode).toBe(200);
    h.clock.ms = Date.UTC(2026, 2, 12, 0, 0, 1);
    expect((await chat(h.app, user.headers)).statusCode).toBe(200);
  });

  it('account, monthly: held across keys until the next UTC month, also after the ledger reached the database', async () => {
    const user = await quotaUser(h);
    await setAccountLimits(h.app, user.username, { usd_per_month: 2 });
    h.clock.ms = Date.UTC(2026, 3, 30, 22, 0, 0);
    expect((await chat(h.app, user.headers)).statusCode).toBe(200);
    await h.app.usageLedger.flush();
    expect((await chat(h.app, user.second.headers)).statusCode).toBe(200);
    await h.app.usageLedger.flush();
    const refused = await chat(h.app, user.headers);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().error.message).toBe(
      `Spend quota exceeded: account "${user.username}" has spent $2.000000 of its monthly limit of $2 (UTC month); the quota resets at 2026-05-01T00:00:00.000Z.`,
    );
    h.clock.ms = Date.UTC(2026, 4, 1, 0, 0, 0);
    expect((await chat(h.app, user.second.headers)).statusCode).toBe(200);
  });

  it('a ladder run over its account quota is refused before it starts; one that crosses it mid-run ends with the 402', async () => {
    const user = await quotaUser(h);
    const ladder = {
      name: 'two', exit: 'b', executionBudget: { maxSpend: 50 },
      steps: [
        { id: 'a', name: 'A', type: 'normal', fields: [{ name: 'Q', type: 'text', from: 'input.context' }], systemPrompt: 'Answer.' },
        { id: 'b', name: 'B', type: 'normal', fields: [{ name: 'A', type: 'ingest', from: { stepId: 'a' } }], systemPrompt: 'Improve.' },
      ],
    };
    const saved = await h.app.inject({ method: 'PUT', url: `/v1/${user.username}/two`, headers: user.headers, payload: { config: ladder } });
    expect(saved.statusCode, saved.body).toBeLessThan(300);
    await setAccountLimits(h.app, user.username, { usd_per_day: 0.5 });
    h.clock.ms = Date.UTC(2026, 5, 1, 8, 0, 0);
    // The first call costs far more than $0.5: the second call of the run is refused.
    const run = await h.app.inject({ method: 'POST', url: `/v1/${user.username}/two/chat/completions`, headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    expect(run.statusCode).toBe(402);
    expect(run.json().error.code).toBe('quota_exceeded');
    const before = h.fake.requests.length;
    const refused = await h.app.inject({ method: 'POST', url: `/v1/${user.username}/two/chat/completions`, headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    expect(refused.statusCode).toBe(402);
    expect(h.fake.requests.length).toBe(before);
  });

  it('a ladder run counts every model call against requests per minute and ends with 429 when they run out', async () => {
    const user = await quotaUser(h);
    const ladder = {
      name: 'three', exit: 'c', executionBudget: { maxSpend: 50 },
      steps: ['a', 'b', 'c'].map((id) => ({ id, name: id, type: 'normal', fields: [{ name: 'Q', type: 'text', from: 'input.context' }], systemPrompt: 'Answer.' })),
    };
    expect((await h.app.inject({ method: 'PUT', url: `/v1/${user.username}/three`, headers: user.headers, payload: { config: ladder } })).statusCode).toBeLessThan(300);
    await setKeyLimits(h.app, user.keyId, { requests_per_minute: 4 });
    h.clock.nextMinute();
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    const ok = await h.app.inject({ method: 'POST', url: `/v1/${user.username}/three/chat/completions`, headers: user.headers, payload: body });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.headers['x-ratelimit-remaining-requests']).toBe('1');
    expect(Number(ok.headers['x-ladder-cost-usd'])).toBeGreaterThan(0);
    const refused = await h.app.inject({ method: 'POST', url: `/v1/${user.username}/three/chat/completions`, headers: user.headers, payload: body });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('rate_limit_exceeded');
    expect(refused.headers['retry-after']).toBe('60');
    // Now none remain: the next run is refused when it starts.
    const atStart = await h.app.inject({ method: 'POST', url: `/v1/${user.username}/three/chat/completions`, headers: user.headers, payload: body });
    expect(atStart.statusCode).toBe(429);
    expect(atStart.headers['x-ladder-instance']).toBeUndefined();
  });
});
