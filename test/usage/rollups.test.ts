// Issue 22, item 1: reports read the hourly totals the ledger keeps beside its raw rows, and
// answer exactly what a scan of the raw rows answers, for every group and for ranges that
// start or end inside an hour; a batch written twice under one id counts once.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { nanosToUsd } from '../../src/money.js';
import type { GroupBy } from '../../src/schemas/quotas.js';
import { createSpendTracker } from '../../src/quotas/spend.js';
import type { UsageEntry } from '../../src/usage/entry.js';
import { createLedger } from '../../src/usage/ledger.js';
import { MAX_BATCH_ROWS, storeBatch } from '../../src/usage/ledger-write.js';
import { usageReport } from '../../src/usage/report.js';
import { openTestDatabase } from '../helpers/database.js';

const GROUPS: GroupBy[] = ['day', 'model', 'provider', 'api_key', 'ladder'];
const RAW_GROUP: Record<GroupBy, string> = {
  day: `to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`,
  model: 'model',
  provider: 'provider',
  api_key: 'api_key_id::text',
  ladder: 'ladder',
};

/** The report as it was computed before the rollups: a scan of the raw rows. */
async function rawReport(database: Database, accountId: string, start: number, end: number, groupBy: GroupBy) {
  const group = RAW_GROUP[groupBy];
  const rows = await database.query<Record<string, string | null>>(
    `select ${group} as "group", count(*) as requests, sum(prompt_tokens) as prompt, sum(completion_tokens) as completion,
       sum(total_tokens) as total, sum(cost_nanos) as cost
     from usage_records where account_id = $1 and created_at >= $2 and created_at < $3 group by ${group} order by ${group}`,
    [accountId, new Date(start).toISOString(), new Date(end).toISOString()],
  );
  return rows.map((r) => ({ group: r.group, requests: Number(r.requests), prompt_tokens: Number(r.prompt), completion_tokens: Number(r.completion), total_tokens: Number(r.total), cost_usd: nanosToUsd(Number(r.cost)) }));
}

/** mulberry32: the same rows on every run. */
function generator(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('usage reports from hourly totals', () => {
  let database: Database;
  const account = randomUUID();
  const other = randomUUID();
  const keys = [randomUUID(), randomUUID(), null];
  const july = Date.UTC(2026, 6, 1);
  beforeAll(async () => {
    database = await openTestDatabase();
    const clock = () => july;
    const ledger = createLedger(database, { flushMs: 3_600_000, flushRows: 1_000_000, spend: createSpendTracker(database.db, clock), clock, log: { warn() {}, error() {} } });
    const next = generator(7);
    const pick = <T,>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
    for (let i = 0; i < 3000; i++) {
      const prompt = Math.floor(next() * 500);
      const completion = Math.floor(next() * 300);
      // Mostly within July; some on the very first and last millisecond of an hour.
      const at = i % 50 === 0 ? july + Math.floor(next() * 700) * 3_600_000 - (i % 100 === 0 ? 1 : 0) : july + Math.floor(next() * 31 * 86_400_000);
      ledger.record({
        at,
        accountId: i % 10 === 0 ? other : account,
        apiKeyId: pick(keys),
        provider: pick(['openai', 'anthropic', null]),
        model: pick(['gpt-4o-mini', 'gpt-4o', 'claude-3-5-haiku-latest']),
        ladder: pick([null, 'alice/refine', 'bob/debate']),
        instanceId: null,
        usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
        costNanos: pick([0, 125_000, 500_000_000, prompt]),
        outcome: 'ok',
      });
      // Several batches, so that groups meet in the totals across batches.
      if (i % 700 === 699) await ledger.flush();
    }
    await ledger.close();
  });
  afterAll(() => database.close());

  const H = 3_600_000;
  const ranges: Array<[string, number, number]> = [
    ['the whole month', july, Date.UTC(2026, 7, 1)],
    ['whole hours', july + 5 * H, july + 29 * H],
    ['starting and ending inside an hour', july + 3 * H + 1234, july + 20 * 86_400_000 + 17 * H + 59 * 60_000],
    ['inside one hour', july + 40 * H + 60_000, july + 40 * H + 59 * 60_000],
    ['ending one millisecond after an hour', july + 10 * H, july + 300 * H + 1],
    ['starting one millisecond before an hour', july + 10 * H - 1, july + 300 * H],
    ['before the first row', Date.UTC(2026, 5, 1), july],
  ];
  for (const [name, start, end] of ranges) {
    it(`answers ${name} exactly as the raw rows do, for every group`, async () => {
      for (const groupBy of GROUPS) {
        const expected = await rawReport(database, account, start, end, groupBy);
        const report = await usageReport(database, account, { start, end }, groupBy);
        // Costs too, exactly: whole nanos summed as integers, whatever the mix of hourly totals and raw rows.
        expect(report.data, groupBy).toEqual(expected);
      }
    });
  }

  it('keeps one totals row per account, hour and group', async () => {
    const [dupes] = await database.query<{ n: number }>(
      `select count(*)::int as n from (select 1 from usage_hourly group by account_id, hour, api_key_id, provider, model, ladder having count(*) > 1) d`,
    );
    expect(dupes!.n).toBe(0);
    const [sums] = await database.query<{ hourly: string; raw: string }>(
      `select (select sum(requests) from usage_hourly)::text as hourly, (select count(*) from usage_records)::text as raw`,
    );
    expect(sums).toEqual({ hourly: '3000', raw: '3000' });
  });

  it('writes a batch once under its id: a retry after a lost acknowledgement adds nothing', async () => {
    const account = randomUUID();
    const at = july + 1_234;
    const row: UsageEntry = { at, accountId: account, apiKeyId: null, provider: 'openai', model: 'm', ladder: null, instanceId: null, usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }, costNanos: 500_000_000, outcome: 'ok' };
    const id = randomUUID();
    const delta = { scope: 'account' as const, id: account, metric: 'usd_day' as const, windowStart: july, amount: 1_000_000_000 };
    const total = { ...delta, amount: 1_000_000_000 };
    expect(await storeBatch(database, id, [row, row], [delta])).toEqual({ fresh: true, totals: [total] });
    // The retry adds nothing to the counter and still reads its total.
    expect(await storeBatch(database, id, [row, row], [delta])).toEqual({ fresh: false, totals: [total] });
    const report = await usageReport(database, account, { start: july, end: july + H }, 'model');
    expect(report.data).toEqual([{ group: 'm', requests: 2, prompt_tokens: 2, completion_tokens: 4, total_tokens: 6, cost_usd: 1 }]);
    // The call's time is kept to the millisecond.
    const stored = await database.query<{ ms: string }>(`select (extract(epoch from created_at) * 1000)::bigint::text as ms from usage_records where account_id = $1`, [account]);
    expect(stored).toEqual([{ ms: String(at) }, { ms: String(at) }]);
  });

  it('stores every row of a batch as recorded: values rows repeat (sent once), nulls, times out of order', async () => {
    const [a, b, key, run1, run2] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const entry = (i: number, over: Partial<UsageEntry>): UsageEntry => ({
      at: july + 7 * H - 13 * i, accountId: a, apiKeyId: key, provider: 'openai', model: 'gpt-4o-mini', ladder: null, instanceId: null,
      usage: { prompt_tokens: i, completion_tokens: 2 * i, total_tokens: 3 * i + 1 }, costNanos: 1_000 * i + 7, outcome: 'ok', ...over,
    });
    // Runs of equal values, the same values again after others, and every column changing on its own.
    const rows = [
      entry(0, {}), entry(1, {}), entry(2, { accountId: b }), entry(3, {}), entry(4, { apiKeyId: null }), entry(5, { provider: null }),
      entry(6, { model: 'claude' }), entry(7, { ladder: 'ann/x', instanceId: run1 }), entry(8, { ladder: 'ann/x', instanceId: run1 }),
      entry(9, { ladder: 'ann/x', instanceId: run2 }), entry(10, { outcome: 'vendor_timeout' }), entry(11, { at: july + 7 * H + 999 }), entry(12, {}),
    ];
    expect(await storeBatch(database, randomUUID(), rows, [])).toEqual({ fresh: true, totals: [] });
    const stored = await database.query<Record<string, unknown>>(
      `select (extract(epoch from created_at) * 1000)::bigint::float8 as at, account_id, api_key_id, provider, model, ladder, instance_id,
         prompt_tokens, completion_tokens, total_tokens, cost_nanos::float8 as cost_nanos, outcome
       from usage_records where account_id = any($1::uuid[]) order by id`,
      [[a, b]],
    );
    expect(stored).toEqual(rows.map((r) => ({
      at: r.at, account_id: r.accountId, api_key_id: r.apiKeyId, provider: r.provider, model: r.model, ladder: r.ladder, instance_id: r.instanceId,
      prompt_tokens: r.usage.prompt_tokens, completion_tokens: r.usage.completion_tokens, total_tokens: r.usage.total_tokens, cost_nanos: r.costNanos, outcome: r.outcome,
    })));
  });

  it('writes a flush of more rows than a batch holds as several batches, every row once', async () => {
    const big = randomUUID();
    const clock = () => july;
    const ledger = createLedger(database, { flushMs: 3_600_000, flushRows: 1_000_000, spend: createSpendTracker(database.db, clock), clock, log: { warn() {}, error() {} } });
    const rows = 2 * MAX_BATCH_ROWS + 1;
    const count = async () => (await database.query<{ n: number }>('select count(*)::int as n from usage_batches'))[0]!.n;
    const before = await count();
    for (let i = 0; i < rows; i++) {
      ledger.record({ at: july + i, accountId: big, apiKeyId: null, provider: 'openai', model: 'm', ladder: null, instanceId: null, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, costNanos: 1, outcome: 'ok' });
    }
    await ledger.close();
    expect(await count()).toBe(before + 3);
    const report = await usageReport(database, big, { start: july, end: july + H }, 'model');
    expect(report.data).toEqual([{ group: 'm', requests: rows, prompt_tokens: rows, completion_tokens: rows, total_tokens: 2 * rows, cost_usd: nanosToUsd(rows) }]);
  });

  it('writes a batch without spend: no counter, still one answer', async () => {
    const account = randomUUID();
    const row: UsageEntry = { at: july, accountId: account, apiKeyId: null, provider: null, model: 'free', ladder: null, instanceId: null, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, costNanos: 0, outcome: 'ok' };
    expect(await storeBatch(database, randomUUID(), [row], [])).toEqual({ fresh: true, totals: [] });
    const report = await usageReport(database, account, { start: july, end: july + H }, 'model');
    expect(report.data).toEqual([{ group: 'free', requests: 1, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_usd: 0 }]);
  });
});
