// Issue 18, item 7: money is exact. A thousand calls at prices no double holds exactly: the
// answers' costs, the ledger's rows, the usage report, the account's month and the spend
// counter all say the same amount to the nano, and no money field is written with float noise.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { nanosOf, nanosToUsd, usdDecimal } from '../../src/money.js';
import { costOf, createPriceTable } from '../../src/pricing/prices.js';
import { adminHeaders } from '../helpers/build.js';
import { minimalLadder } from '../ladders/examples.js';
import { chat, quotaUser, setAccountLimits, startQuotaHarness, type QuotaHarness } from '../quotas/helpers.js';

// $0.0375 and $0.1234567 per million tokens: 37.5 and 123.4567 nanos a token.
const PRICES = { 'gpt-4o-mini': { input: 0.0375, output: 0.1234567 } };
const CALLS = 1000;

let h: QuotaHarness;
beforeAll(async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'ladder-prices-')), 'prices.json');
  writeFileSync(file, JSON.stringify(PRICES));
  h = await startQuotaHarness({ PRICES_FILE: file, USAGE_FLUSH_ROWS: '100' });
});
afterAll(async () => {
  await h?.close();
});

/** Every member whose name says dollars, anywhere in a JSON text, as written. */
function moneyFields(text: string): string[] {
  return [...text.matchAll(/"(\w*usd\w*)":\s*(-?[\d.eE+-]+)/g)].map((m) => `${m[1]}=${m[2]}`);
}

describe('exact money', () => {
  it(`${CALLS} calls at odd prices: answers, ledger rows, report, account and spend counter agree to the nano`, async () => {
    const user = await quotaUser(h);
    // A spend limit far above the spend, so that the shared counter keeps the account's total.
    await setAccountLimits(h.app, user.username, { usd_per_day: 1000 });
    h.clock.ms = Date.UTC(2026, 6, 20, 9, 0, 0);
    const table = createPriceTable({ models: PRICES });
    let answered = 0;
    for (let i = 0; i < CALLS; i++) {
      const res = await chat(h.app, user.headers, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(1 + (i % 97)) }], max_tokens: 200 });
      expect(res.statusCode, res.body).toBe(200);
      // Each answer's cost is the exact usage times the price, rounded once to whole nanos.
      const cost = costOf('gpt-4o-mini', res.json().usage, table);
      expect(res.headers['x-ladder-cost-usd']).toBe(usdDecimal(cost));
      answered += cost;
    }
    await h.app.usageLedger.flush();
    // The account's month runs up to now, exclusive: past the instant the calls were recorded at.
    h.clock.advance(1000);

    const [rows] = await h.testApp.database.query<{ n: number; total: string }>(
      'select count(*)::int as n, sum(cost_nanos)::text as total from usage_records where account_id = $1',
      [user.id],
    );
    expect(rows).toEqual({ n: CALLS, total: String(answered) });

    const report = await h.app.inject({ method: 'GET', url: '/v1/usage?start=2026-07-01&end=2026-07-31&group_by=model', headers: user.headers });
    expect(report.json().data).toEqual([expect.objectContaining({ group: 'gpt-4o-mini', requests: CALLS, cost_usd: nanosToUsd(answered) })]);
    expect(moneyFields(report.body)).toEqual([`cost_usd=${nanosToUsd(answered)}`]);

    const account = await h.app.inject({ method: 'GET', url: '/v1/account', headers: user.headers });
    expect(account.json().this_month.cost_usd).toBe(nanosToUsd(answered));
    const detail = await h.app.inject({ method: 'GET', url: `/v1/admin/accounts/${user.username}`, headers: adminHeaders });
    expect(detail.json().this_month.cost_usd).toBe(nanosToUsd(answered));
    expect(detail.json().limits.usd_per_day).toBe(1000);

    // The counter holds the spend once this process's slice, idle for the second above, is back.
    await vi.waitFor(async () => {
      const [counter] = await h.testApp.database.query<{ amount: string }>(
        "select amount::text as amount from quota_windows where subject_id = $1 and metric = 'usd_day'",
        [user.id],
      );
      expect(counter).toEqual({ amount: String(answered) });
    }, { timeout: 5000 });
    // As text, the total is the exact decimal: no 6.434999999999999e-05 anywhere.
    for (const body of [report.body, account.body, detail.body]) {
      for (const field of moneyFields(body)) expect(field).not.toMatch(/e-|\d{10,}\.|\.\d{10,}/);
    }
    // A thousand requests through the whole stack: seconds on a busy machine. Not a speed test.
  }, 180_000);

  it('a ladder run: its spend is the sum of its calls, in the instance, the list, the admin views and its events', async () => {
    const user = await quotaUser(h);
    const saved = await h.app.inject({ method: 'PUT', url: `/v1/${user.username}/refine`, headers: user.headers, payload: { config: minimalLadder } });
    expect(saved.statusCode, saved.body).toBeLessThan(300);
    const run = await h.app.inject({ method: 'POST', url: `/v1/${user.username}/refine/chat/completions`, headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'what is 2+2?' }] } });
    expect(run.statusCode, run.body).toBe(200);
    const id = run.headers['x-ladder-instance'] as string;
    const trace = (await h.app.inject({ method: 'GET', url: `/v1/pipelines/instances/${id}/trace`, headers: user.headers })).json();
    const costs: number[] = trace.steps.flatMap((s: { nodes: Array<{ cost_usd: number }> }) => s.nodes.map((n) => nanosOf(n.cost_usd)));
    expect(costs).toHaveLength(2);
    const spend = costs.reduce((a, b) => a + b, 0);
    expect(run.headers['x-ladder-cost-usd']).toBe(usdDecimal(spend));
    const views = [
      await h.app.inject({ method: 'GET', url: `/v1/pipelines/instances/${id}`, headers: user.headers }),
      await h.app.inject({ method: 'GET', url: `/v1/admin/instances/${id}`, headers: adminHeaders }),
    ];
    for (const view of views) expect(view.json().spend_usd, view.body).toBe(nanosToUsd(spend));
    const list = await h.app.inject({ method: 'GET', url: '/v1/pipelines/instances', headers: user.headers });
    expect(list.json().data.map((i: { spend_usd: number }) => i.spend_usd)).toEqual([nanosToUsd(spend)]);
    const events = await h.app.inject({ method: 'GET', url: `/v1/pipelines/instances/${id}/events`, headers: { ...user.headers, accept: 'text/event-stream' } });
    expect(events.body).toContain(`"spend_usd":${nanosToUsd(spend)}`);
    for (const body of [trace === null ? '' : JSON.stringify(trace), list.body, events.body, ...views.map((v) => v.body)]) {
      for (const field of moneyFields(body)) expect(field).not.toMatch(/e-|\.\d{10,}/);
    }
  });

  it('a spend limit with more than 9 decimals is refused with 400, naming the field; float noise of a client is not', async () => {
    const user = await quotaUser(h);
    const refused = await h.app.inject({ method: 'PUT', url: `/v1/admin/accounts/${user.username}/limits`, headers: adminHeaders, payload: { usd_per_day: 0.0000000001 } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toEqual({
      message: 'usd_per_day must have at most 9 decimals (whole nano-dollars), got 1e-10.', type: 'invalid_request_error', code: 'invalid_value', param: 'usd_per_day',
    });
    const noisy = await h.app.inject({ method: 'PUT', url: `/v1/admin/accounts/${user.username}/limits`, headers: adminHeaders, payload: { usd_per_month: 0.1 + 0.2 } });
    expect(noisy.statusCode, noisy.body).toBe(200);
    expect(noisy.json().usd_per_month).toBe(0.3);
    const above = await h.app.inject({ method: 'PUT', url: `/v1/admin/accounts/${user.username}/limits`, headers: adminHeaders, payload: { usd_per_month: 9_000_001 } });
    expect(above.statusCode).toBe(400);
  });
});
