// Totals of the usage ledger for one account over a time range, grouped one way: from the
// hourly totals for whole hours, from the raw rows for the partial hours at the edges.
import type { Database } from '../db/client.js';
import { invalidRequest } from '../errors.js';
import { nanosToUsd } from '../money.js';
import type { GroupBy, UsageQuery, UsageReport } from '../schemas/quotas.js';

const MAX_RANGE_MS = 366 * 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

// The instants the database takes as four-digit years: it has no year 0, nor any after 9999 in this form.
const FIRST_MS = Date.parse('0001-01-01T00:00:00Z');
const END_MS = Date.parse('9999-12-31T23:59:59.999Z');

function parseInstant(value: string, param: 'start' | 'end'): number {
  const dateOnly = DATE_ONLY.test(value);
  const ms = dateOnly || DATE_TIME.test(value) ? Date.parse(dateOnly ? `${value}T00:00:00Z` : value) : Number.NaN;
  // Date.parse rolls 2026-02-30 over to March; a real date must survive the round trip.
  if (Number.isNaN(ms) || (dateOnly && new Date(ms).toISOString().slice(0, 10) !== value)) {
    throw invalidRequest('invalid_value', `${param} must be a date (YYYY-MM-DD) or an ISO 8601 date-time with a time zone, got ${JSON.stringify(value)}.`, param);
  }
  const instant = dateOnly && param === 'end' ? ms + 86_400_000 : ms;
  if (instant < FIRST_MS || instant > END_MS) {
    throw invalidRequest('invalid_value', `${param} must fall between 0001-01-01 and 9999-12-31 (UTC), got ${JSON.stringify(value)}.`, param);
  }
  return instant;
}

/** The range a query asks for: [start, end), validated. */
export function usageRange(query: UsageQuery, now: number): { start: number; end: number } {
  const today = new Date(now);
  const start = query.start !== undefined ? parseInstant(query.start, 'start') : Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1);
  const end = query.end !== undefined ? parseInstant(query.end, 'end') : now;
  if (end <= start) throw invalidRequest('invalid_range', 'end must be after start.', 'end');
  if (end - start > MAX_RANGE_MS) throw invalidRequest('invalid_range', 'The range may span at most 366 days.', 'end');
  return { start, end };
}

// Each group, over the raw rows and over the hourly totals (whose `hour` starts a UTC hour).
const GROUPS: Record<GroupBy, { raw: string; hourly: string }> = {
  day: { raw: `to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`, hourly: `to_char(hour at time zone 'UTC', 'YYYY-MM-DD')` },
  model: { raw: 'model', hourly: 'model' },
  provider: { raw: 'provider', hourly: 'provider' },
  api_key: { raw: 'api_key_id::text', hourly: 'api_key_id::text' },
  ladder: { raw: 'ladder', hourly: 'ladder' },
};

const HOUR_MS = 3_600_000;

/**
 * The whole hours of the range are read from the hourly totals, so a month is a few hundred
 * rows per group whatever the traffic; the partial hours at either edge from the raw rows (a
 * range on whole hours reads none). Both through indexes that lead with the account.
 */
function reportSql(groupBy: GroupBy, thenBy: GroupBy | undefined): string {
  const { raw, hourly } = GROUPS[groupBy];
  // Without a second grouping the subgroup is one constant, grouped over for free.
  const sub = thenBy ? GROUPS[thenBy] : { raw: 'null::text', hourly: 'null::text' };
  return `
    select grp as "group", sub as "subgroup", sum(requests)::float8 as requests, sum(prompt)::float8 as prompt, sum(completion)::float8 as completion,
      sum(total)::float8 as total, sum(cost)::float8 as cost
    from (
      select ${hourly} as grp, ${sub.hourly} as sub, requests, prompt_tokens as prompt, completion_tokens as completion, total_tokens as total, cost_nanos as cost
      from usage_hourly where account_id = $1 and hour >= $3::timestamptz and hour < $4::timestamptz
      union all
      select ${raw}, ${sub.raw}, 1, prompt_tokens, completion_tokens, total_tokens, cost_nanos
      from usage_records where account_id = $1 and created_at >= $2::timestamptz and created_at < $3::timestamptz
      union all
      select ${raw}, ${sub.raw}, 1, prompt_tokens, completion_tokens, total_tokens, cost_nanos
      from usage_records where account_id = $1 and created_at >= $4::timestamptz and created_at < $5::timestamptz
    ) u
    group by grp, sub order by grp, sub`;
}

/** The report grouped by `groupBy`, and within each group by `thenBy` when given (rows then carry `subgroup`). */
export async function usageReport(database: Pick<Database, 'query'>, accountId: string, range: { start: number; end: number }, groupBy: GroupBy, thenBy?: GroupBy): Promise<UsageReport> {
  if (thenBy === groupBy) throw invalidRequest('invalid_value', `then_by must differ from group_by (both are ${JSON.stringify(groupBy)}).`, 'then_by');
  // [start, firstHour) and [lastHour, end) from raw rows; [firstHour, lastHour) from the totals.
  const firstHour = Math.min(Math.ceil(range.start / HOUR_MS) * HOUR_MS, range.end);
  const lastHour = Math.max(Math.floor(range.end / HOUR_MS) * HOUR_MS, firstHour);
  const iso = (ms: number) => new Date(ms).toISOString();
  const rows = await database.query<{ group: string | null; subgroup: string | null; requests: number; prompt: number; completion: number; total: number; cost: number }>(
    reportSql(groupBy, thenBy),
    [accountId, iso(range.start), iso(firstHour), iso(lastHour), iso(range.end)],
  );
  return {
    object: 'list',
    data: rows.map((r) => ({
      group: r.group,
      ...(thenBy ? { subgroup: r.subgroup } : {}),
      requests: Number(r.requests),
      prompt_tokens: Number(r.prompt),
      completion_tokens: Number(r.completion),
      total_tokens: Number(r.total),
      // A float8 holds every whole number of nanos a JS number does: the sum is exact.
      cost_usd: nanosToUsd(Number(r.cost)),
    })),
    start: iso(range.start),
    end: iso(range.end),
  };
}
