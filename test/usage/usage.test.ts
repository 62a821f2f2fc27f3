// Issue 10, item 4: the ledger's totals (GET /v1/usage) equal the sum of what every answer
// reported, for a mix of direct calls and synchronous ladder runs; range validation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nanosOf, usdDecimal } from '../../src/money.js';
import { adminHeaders } from '../helpers/build.js';
import { minimalLadder } from '../ladders/examples.js';
import { chat, quotaUser, startQuotaHarness, type QuotaHarness } from '../quotas/helpers.js';

let h: QuotaHarness;
beforeAll(async () => {
  h = await startQuotaHarness({ USAGE_FLUSH_ROWS: '3' });
});
afterAll(async () => {
  await h?.close();
});

interface Row { group: string | null; subgroup?: string | null; requests: number; prompt_tokens: number; completion_tokens: number; total_tokens: number; cost_usd: number }

async function usage(headers: Record<string, string>, query: string) {
  const res = await h.app.inject({ method: 'GET', url: `/v1/usage?${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ object: 'list'; data: Row[]; start: string; end: string }>();
}

const sum = (rows: Row[], field: keyof Omit<Row, 'group' | 'subgroup'>) => rows.reduce((acc, r) => acc + r[field], 0);

describe('GET /v1/usage', () => {
  it('totals equal the sum of every answer’s usage and cost, direct calls and ladder runs alike', async () => {
    const user = await quotaUser(h);
    const saved = await h.app.inject({ method: 'PUT', url: `/v1/${user.username}/refine`, headers: user.headers, payload: { config: minimalLadder } });
    expect(saved.statusCode, saved.body).toBeLessThan(300);
    h.clock.ms = Date.UTC(2026, 6, 14, 10, 0, 0);
    const totals = { requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_nanos: 0 };
    const add = (res: { json(): any; headers: Record<string, unknown> }, calls: number) => {
      const u = res.json().usage;
      totals.requests += calls;
      totals.prompt_tokens += u.prompt_tokens;
      totals.completion_tokens += u.completion_tokens;
      totals.total_tokens += u.total_tokens;
      totals.cost_nanos += nanosOf(Number(res.headers['x-ladder-cost-usd']));
    };
    for (let i = 0; i < 7; i++) {
      const headers = i % 2 === 0 ? user.headers : user.second.headers;
      const direct = await chat(h.app, headers, { model: i % 3 === 0 ? 'gpt-4o' : 'gpt-4o-mini', messages: [{ role: 'user', content: `question number ${i}` }] });
      expect(direct.statusCode, direct.body).toBe(200);
      add(direct, 1);
      if (i % 2 === 0) {
        const run = await h.app.inject({ method: 'POST', url: `/v1/${user.username}/refine/chat/completions`, headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `ladder question ${i}` }] } });
        expect(run.statusCode, run.body).toBe(200);
        add(run, 2);
      }
      h.clock.advance(6 * 3_600_000);
    }
    // A failed call is a request without tokens or cost.
    h.fake.script({ kind: 'error', status: 400, message: 'bad request' });
    expect((await chat(h.app, user.headers)).statusCode).toBe(400);
    totals.requests += 1;

    const range = 'start=2026-07-01&end=2026-07-31';
    for (const groupBy of ['day', 'model', 'provider', 'api_key', 'ladder']) {
      const report = await usage(user.headers, `${range}&group_by=${groupBy}`);
      expect(report.start).toBe('2026-07-01T00:00:00.000Z');
      expect(report.end).toBe('2026-08-01T00:00:00.000Z');
      expect(sum(report.data, 'requests')).toBe(totals.requests);
      expect(sum(report.data, 'prompt_tokens')).toBe(totals.prompt_tokens);
      expect(sum(report.data, 'completion_tokens')).toBe(totals.completion_tokens);
      expect(sum(report.data, 'total_tokens')).toBe(totals.total_tokens);
      // Exactly: the rows' dollars are whole nanos, and their sum (as nanos) is what the answers reported.
      expect(report.data.reduce((acc, r) => acc + nanosOf(r.cost_usd), 0)).toBe(totals.cost_nanos);
    }
    const byLadder = await usage(user.headers, `${range}&group_by=ladder`);
    expect(byLadder.data.map((r) => r.group)).toEqual([`${user.username}/refine`, null]);
    expect(byLadder.data[0]!.requests).toBe(8);
    const byKey = await usage(user.headers, `${range}&group_by=api_key`);
    expect(byKey.data.map((r) => r.group).sort()).toEqual([user.keyId, user.second.id].sort());
    const byDay = await usage(user.headers, `${range}&group_by=day`);
    expect(byDay.data.map((r) => r.group)).toEqual(['2026-07-14', '2026-07-15', '2026-07-16']);
    const byModel = await usage(user.headers, `${range}&group_by=model`);
    expect(byModel.data.map((r) => r.group)).toEqual(['gpt-4o', 'gpt-4o-mini']);
    // Two groupings: each day split by model, whose parts add up to each day and each model.
    const dayByModel = await usage(user.headers, `${range}&group_by=day&then_by=model`);
    expect(dayByModel.data.map((r) => [r.group, r.subgroup])).toEqual([
      ['2026-07-14', 'gpt-4o'], ['2026-07-14', 'gpt-4o-mini'],
      ['2026-07-15', 'gpt-4o'], ['2026-07-15', 'gpt-4o-mini'],
      ['2026-07-16', 'gpt-4o-mini'],
    ]);
    for (const day of byDay.data) expect(sum(dayByModel.data.filter((r) => r.group === day.group), 'total_tokens')).toBe(day.total_tokens);
    for (const model of byModel.data) expect(sum(dayByModel.data.filter((r) => r.subgroup === model.group), 'requests')).toBe(model.requests);
    expect(byModel.data.every((r) => !('subgroup' in r))).toBe(true);

    // The admin API answers the same for the account.
    const admin = await h.app.inject({ method: 'GET', url: `/v1/admin/accounts/${user.username}/usage?${range}&group_by=model`, headers: adminHeaders });
    expect(admin.json()).toEqual(byModel);
    // Another account sees none of it.
    const other = await quotaUser(h);
    expect((await usage(other.headers, range)).data).toEqual([]);
  });

  it('ledger rows carry the ladder, its instance, the provider and the outcome', async () => {
    const user = await quotaUser(h);
    await h.app.inject({ method: 'PUT', url: `/v1/${user.username}/refine`, headers: user.headers, payload: { config: minimalLadder } });
    const run = await h.app.inject({ method: 'POST', url: `/v1/${user.username}/refine/chat/completions`, headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] } });
    expect(run.statusCode).toBe(200);
    await h.app.usageLedger.flush();
    const rows = await h.testApp.database.query<Record<string, unknown>>('select * from usage_records where account_id = $1', [user.id]);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatchObject({ ladder: `${user.username}/refine`, instance_id: run.headers['x-ladder-instance'], provider: 'openai', model: 'gpt-4o-mini', outcome: 'ok', api_key_id: user.keyId });
    }
    // A direct call: no ladder, no instance, and the time the clock gave.
    const direct = await h.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] } });
    expect(direct.statusCode).toBe(200);
    await h.app.usageLedger.flush();
    const [row] = await h.testApp.database.query<Record<string, unknown>>(
      'select * from usage_records where account_id = $1 and ladder is null',
      [user.id],
    );
    expect(row).toMatchObject({ ladder: null, instance_id: null, provider: 'openai', model: 'gpt-4o-mini', outcome: 'ok', api_key_id: user.keyId });
    expect(new Date(row!.created_at as string).getTime()).toBe(h.clock.ms);
    expect(usdDecimal(Number(row!.cost_nanos))).toBe(direct.headers['x-ladder-cost-usd']);
  });

  it('defaults to the current UTC month; rejects bad dates and ranges with 400', async () => {
    const user = await quotaUser(h);
    h.clock.ms = Date.UTC(2026, 8, 17, 9, 30, 0);
    const report = await usage(user.headers, '');
    expect(report).toEqual({ object: 'list', data: [], start: '2026-09-01T00:00:00.000Z', end: '2026-09-17T09:30:00.000Z' });
    for (const [query, param] of [
      ['start=yesterday', 'start'],
      ['start=2026-02-30', 'start'],
      ['end=2026-09-01T10:00:00', 'end'],
      ['start=2026-09-10&end=2026-09-09', 'end'],
      ['start=2024-01-01&end=2026-01-01', 'end'],
      // Instants the database cannot take: the year 0, the end of 9999-12-31, 0001-01-01 at +01:00.
      ['start=0000-12-31&end=0000-12-31', 'start'],
      ['start=9999-12-31&end=9999-12-31', 'end'],
      ['start=0001-01-01T00:00:00%2B01:00&end=0001-01-02', 'start'],
    ]) {
      const res = await h.app.inject({ method: 'GET', url: `/v1/usage?${query}`, headers: user.headers });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.param, query).toBe(param);
    }
    const edges = await usage(user.headers, 'start=0001-01-01&end=0001-01-01');
    expect(edges).toEqual({ object: 'list', data: [], start: '0001-01-01T00:00:00.000Z', end: '0001-01-02T00:00:00.000Z' });
    const last = await usage(user.headers, 'start=9999-12-31&end=9999-12-31T23:59:59.999Z');
    expect(last).toEqual({ object: 'list', data: [], start: '9999-12-31T00:00:00.000Z', end: '9999-12-31T23:59:59.999Z' });
    const same = await h.app.inject({ method: 'GET', url: '/v1/usage?group_by=model&then_by=model', headers: user.headers });
    expect(same.statusCode).toBe(400);
    expect(same.json().error).toMatchObject({ code: 'invalid_value', param: 'then_by', message: 'then_by must differ from group_by (both are "model").' });
    const badGroup = await h.app.inject({ method: 'GET', url: '/v1/usage?group_by=week', headers: user.headers });
    expect(badGroup.statusCode).toBe(400);
    expect((await h.app.inject({ method: 'GET', url: '/v1/usage' })).statusCode).toBe(401);
  });
});
