// Issue 16, item 1: nothing a caller or a vendor sends can stop the usage ledger. A NUL in the
// model name is refused before anything happens; absurd token counts are made storable; a row
// the database still refuses is set aside without holding up the rows behind it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { createSpendTracker } from '../../src/quotas/spend.js';
import { MAX_TOKEN_COUNT } from '../../src/storable.js';
import type { UsageEntry } from '../../src/usage/entry.js';
import { createLedger } from '../../src/usage/ledger.js';
import { createUser } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';
import { chat, quotaUser, startQuotaHarness, type QuotaHarness } from '../quotas/helpers.js';

const usageOf = async (h: QuotaHarness, headers: Record<string, string>) => {
  await h.app.usageLedger.flush();
  const res = await h.app.inject({ method: 'GET', url: '/v1/usage?group_by=model&start=2026-03-01&end=2026-03-31', headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ data: Array<{ group: string; requests: number; prompt_tokens: number; completion_tokens: number; total_tokens: number }> }>().data;
};

describe('the usage ledger against hostile input', () => {
  let h: QuotaHarness;
  beforeAll(async () => {
    h = await startQuotaHarness();
  });
  afterAll(() => h.close());

  it('refuses a model name with NUL or a control character with 400 invalid_characters, records nothing, and keeps recording for everyone', async () => {
    const bare = await createUser(h.app); // no connections at all, as in the report
    const user = await quotaUser(h);
    for (const [model, code] of [['x\u0000', '0000'], ['gpt-4o\n', '000A'], ['a\u001bb', '001B'], ['c\u0085', '0085']] as const) {
      for (const headers of [bare.headers, user.headers]) {
        const res = await chat(h.app, headers, { model, messages: [{ role: 'user', content: 'hi' }] });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({
          error: {
            message: `\`model\` contains the control character U+${code}; a model name cannot hold control characters.`,
            type: 'invalid_request_error',
            code: 'invalid_characters',
            param: 'model',
          },
        });
      }
    }
    // The same refusal on the ladder routes, before the ladder is even looked up.
    for (const url of [`/v1/${user.username}/nowhere/chat/completions`, '/v1/pipelines/instances']) {
      const payload = { model: 'x\u0000', messages: [{ role: 'user', content: 'hi' }], author: user.username, template: 'nowhere' };
      const res = await h.app.inject({ method: 'POST', url, headers: user.headers, payload: url.startsWith('/v1/pipelines') ? payload : { model: payload.model, messages: payload.messages } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error.code, url).toBe('invalid_characters');
    }
    expect(h.fake.requests).toHaveLength(0);
    // Every account's calls are still recorded afterwards.
    expect((await chat(h.app, user.headers)).statusCode).toBe(200);
    expect(await usageOf(h, user.headers)).toMatchObject([{ group: 'gpt-4o-mini', requests: 1 }]);
    expect(await usageOf(h, bare.headers)).toEqual([]);
    expect(h.app.usageLedger.buffered).toBe(0);
  });

  it('records a vendor’s absurd token counts within the columns’ range, and the next tenant’s call is recorded too', async () => {
    const user = await quotaUser(h);
    const other = await quotaUser(h);
    const answer = (usage: Record<string, unknown>) => ({
      kind: 'raw' as const,
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage }),
    });
    h.fake.script(
      answer({ prompt_tokens: 5, completion_tokens: 3e9, total_tokens: 3e9 + 5 }),
      answer({ prompt_tokens: 1e300, completion_tokens: 1e300, total_tokens: 1e300 }),
      answer({ prompt_tokens: -7, completion_tokens: 2.5, total_tokens: 'many' }),
    );
    const replies = [];
    for (let i = 0; i < 3; i++) {
      const res = await chat(h.app, user.headers, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
      expect(res.statusCode, res.body).toBe(200);
      replies.push(res.json().usage);
    }
    expect(replies).toEqual([
      { prompt_tokens: 5, completion_tokens: MAX_TOKEN_COUNT, total_tokens: MAX_TOKEN_COUNT },
      { prompt_tokens: MAX_TOKEN_COUNT, completion_tokens: MAX_TOKEN_COUNT, total_tokens: MAX_TOKEN_COUNT },
      { prompt_tokens: 0, completion_tokens: 2, total_tokens: 2 },
    ]);
    expect((await chat(h.app, other.headers)).statusCode).toBe(200);
    expect(await usageOf(h, user.headers)).toEqual([
      { group: 'gpt-4o-mini', requests: 3, prompt_tokens: 5 + MAX_TOKEN_COUNT, completion_tokens: 2 * MAX_TOKEN_COUNT + 2, total_tokens: 2 * MAX_TOKEN_COUNT + 2, cost_usd: expect.any(Number) },
    ]);
    expect(await usageOf(h, other.headers)).toMatchObject([{ group: 'gpt-4o-mini', requests: 1 }]);
    expect(h.app.usageLedger.buffered).toBe(0);
  });
});

describe('a row the database refuses', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(() => database.close());

  const entry = (accountId: string, model: string): UsageEntry => ({
    at: Date.UTC(2026, 0, 5),
    accountId,
    apiKeyId: null,
    provider: 'openai',
    model,
    ladder: null,
    instanceId: null,
    usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    costNanos: 1_000_000,
    outcome: 'ok',
  });

  it('is set aside, logged once without the batch’s values, counted, and every other row is written', async () => {
    const logs: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
    const log = { warn: (obj: object, msg: string) => logs.push({ level: 'warn', obj: obj as never, msg }), error: (obj: object, msg: string) => logs.push({ level: 'error', obj: obj as never, msg }) };
    let rejected = 0;
    const clock = () => Date.UTC(2026, 0, 5);
    const ledger = createLedger(database, { flushMs: 3_600_000, flushRows: 1_000_000, spend: createSpendTracker(database.db, clock), clock, log, onRejected: () => rejected++ });
    const good = randomUUID();
    // An account id the uuid column cannot take stands in for any value the database refuses.
    for (let i = 0; i < 40; i++) ledger.record(entry(i === 17 ? 'secret-in-a-bad-row' : good, `model-${i}`));
    await ledger.flush();
    expect(ledger.buffered).toBe(0);
    expect(rejected).toBe(1);
    const rows = await database.query<{ model: string }>('select model from usage_records where account_id = $1 order by id', [good]);
    expect(rows.map((r) => r.model)).toEqual(Array.from({ length: 40 }, (_, i) => `model-${i}`).filter((m) => m !== 'model-17'));
    expect(logs.filter((l) => l.level === 'error')).toHaveLength(1);
    expect(logs[0]!.msg).toBe('usage ledger row refused by the database; set aside');
    expect(logs[0]!.obj).toMatchObject({ account_id: 'secret-in-a-bad-row', model: 'model-17' });
    // No log line carries the statement or another row's values.
    const text = JSON.stringify(logs);
    expect(text).not.toContain('insert into');
    expect(text).not.toContain('model-3"');
    // The next batch goes through as usual.
    ledger.record(entry(good, 'after'));
    await ledger.flush();
    expect(await database.query('select 1 from usage_records where model = $1', ['after'])).toHaveLength(1);
    await ledger.close();
  });
});
