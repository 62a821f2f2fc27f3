// Issue 10, items 1-2: limits per account and per key, at their boundaries, with an injected
// clock; the OpenAI rate headers on success and on 429; the 402 message of a spend quota.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminHeaders } from '../helpers/build.js';
import { chat, HI, quotaUser, setAccountLimits, setKeyLimits, startQuotaHarness, type QuotaHarness } from './helpers.js';

// One token costs $0.10, so an `hi` call (10 tokens) costs exactly $1.
const pricesFile = path.join(mkdtempSync(path.join(tmpdir(), 'quota-prices-')), 'prices.json');
writeFileSync(pricesFile, JSON.stringify({ 'gpt-4o-mini': { input: 100_000, output: 100_000 }, 'gpt-spend': { input: 0, output: 100_000 } }));

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
  // `gpt-spend` prices prompts at 0 and each output token at $0.10: a call with max_tokens 10
  // holds $1.00 while it runs, and costs $0.80 (`echo: hi` is 8 completion tokens).
  const SPEND = { ...HI, model: 'gpt-spend' };
  const spendRow = async (subjectId: string, metric = 'usd_day') => {
    // Whole nanos (src/money.ts): exact, no rounding needed to compare them.
    const rows = await h.testApp.database.query<{ amount: number | string }>('select amount from quota_windows where subject_id = $1 and metric = $2', [subjectId, metric]);
    return rows.map((r) => Number(r.amount));
  };

  it('key, daily: each call holds its worst case; one that cannot fit gets 402 naming the limit, what is used, the call and the reset', async () => {
    const user = await quotaUser(h);
    await setKeyLimits(h.app, user.keyId, { usd_per_day: 2.5 });
    h.clock.ms = Date.UTC(2026, 2, 11, 23, 0, 0);
    for (let i = 0; i < 2; i++) {
      const ok = await chat(h.app, user.headers, SPEND);
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.headers['x-ladder-cost-usd']).toBe('0.800000000');
    }
    // $1.60 spent: a third call could cost $1.00 and would end at $2.60.
    const before = h.fake.requests.length;
    const refused = await chat(h.app, user.headers, SPEND);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().error).toMatchObject({ type: 'insufficient_quota', code: 'quota_exceeded' });
    expect(refused.json().error.message).toBe(
      `Spend quota exceeded: API key ${user.keyId} has spent or holds for calls in flight $1.600000 of its daily limit of $2.500000, and this call may cost up to $1.000000 (UTC day); the quota resets at 2026-03-12T00:00:00.000Z.`,
    );
    expect(h.fake.requests.length).toBe(before);
    // A call that fits still passes.
    expect((await chat(h.app, user.headers, { ...SPEND, max_tokens: 8 })).statusCode).toBe(200);
    // Another key of the account is not held by this key's quota.
    expect((await chat(h.app, user.second.headers, SPEND)).statusCode).toBe(200);
    h.clock.ms = Date.UTC(2026, 2, 12, 0, 0, 1);
    expect((await chat(h.app, user.headers, SPEND)).statusCode).toBe(200);
  });

  it('calls at once: each is admitted only if its worst case fits beside the others in flight', async () => {
    const user = await quotaUser(h);
    await setKeyLimits(h.app, user.keyId, { usd_per_day: 2.5 });
    h.clock.ms = Date.UTC(2026, 2, 13, 9, 0, 0);
    const answers = await Promise.all(Array.from({ length: 6 }, () => chat(h.app, user.headers, SPEND)));
    // Two holds of $1.00 fit in $2.50, a third does not, whatever the order.
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(2);
    expect(answers.filter((a) => a.statusCode === 402)).toHaveLength(4);
    // Once the ledger has recorded the costs and the slice, idle for a second, has gone back,
    // the counter holds exactly what was spent.
    await h.app.usageLedger.flush();
    h.clock.advance(1000);
    await vi.waitFor(async () => expect(await spendRow(user.keyId)).toEqual([1_600_000_000]), { timeout: 5000 });
  });

  it('a call that sets no max_tokens is sent with the max_tokens the quota pays; none left: 402', async () => {
    const user = await quotaUser(h);
    await setKeyLimits(h.app, user.keyId, { usd_per_day: 2.5 });
    h.clock.ms = Date.UTC(2026, 2, 14, 9, 0, 0);
    const { max_tokens: _unset, ...noCap } = SPEND;
    const ok = await chat(h.app, user.headers, noCap);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(h.fake.requests.at(-1)!.body.max_tokens).toBe(25);
    // $0.80 spent: $1.70 pays 17 tokens.
    expect((await chat(h.app, user.headers, noCap)).statusCode).toBe(200);
    expect(h.fake.requests.at(-1)!.body.max_tokens).toBe(17);
    // $0.90 left pays 9 tokens, fewer than the 16 worth asking for.
    const refused = await chat(h.app, user.headers, noCap);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().error.message).toContain('this call may cost up to $1.600000');
    // Without a spend limit nothing is added.
    await chat(h.app, user.second.headers, noCap);
    expect(h.fake.requests.at(-1)!.body.max_tokens).toBeUndefined();
  });

  it('account, monthly: held across keys until the next UTC month, also after the ledger reached the database', async () => {
    const user = await quotaUser(h);
    await setAccountLimits(h.app, user.username, { usd_per_month: 2 });
    h.clock.ms = Date.UTC(2026, 3, 30, 22, 0, 0);
    expect((await chat(h.app, user.headers, SPEND)).statusCode).toBe(200);
    await h.app.usageLedger.flush();
    expect((await chat(h.app, user.second.headers, SPEND)).statusCode).toBe(200);
    await h.app.usageLedger.flush();
    h.clock.advance(1000);
    await vi.waitFor(async () => expect(await spendRow(user.id, 'usd_month')).toEqual([1_600_000_000]), { timeout: 5000 });
    const refused = await chat(h.app, user.headers, SPEND);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().error.message).toBe(
      `Spend quota exceeded: account "${user.username}" has spent or holds for calls in flight $1.600000 of its monthly limit of $2.000000, and this call may cost up to $1.000000 (UTC month); the quota resets at 2026-05-01T00:00:00.000Z.`,
    );
    h.clock.ms = Date.UTC(2026, 4, 1, 0, 0, 0);
    expect((await chat(h.app, user.second.headers, SPEND)).statusCode).toBe(200);
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
