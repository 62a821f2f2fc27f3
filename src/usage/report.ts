// Totals of the usage ledger for one account over a time range, grouped one way.
import { and, asc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { usageRecords } from '../db/schema.js';
import { invalidRequest } from '../errors.js';
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

const GROUP_EXPRESSIONS: Record<GroupBy, SQL> = {
  day: sql`to_char(${usageRecords.createdAt} at time zone 'UTC', 'YYYY-MM-DD')`,
  model: sql`${usageRecords.model}`,
  provider: sql`${usageRecords.provider}`,
  api_key: sql`${usageRecords.apiKeyId}::text`,
  ladder: sql`${usageRecords.ladder}`,
};

export async function usageReport(db: Db, accountId: string, range: { start: number; end: number }, groupBy: GroupBy): Promise<UsageReport> {
  const group = GROUP_EXPRESSIONS[groupBy];
  const rows = await db
    .select({
      group: sql<string | null>`${group}`,
      requests: sql<string>`count(*)`,
      prompt: sql<string>`coalesce(sum(${usageRecords.promptTokens}), 0)`,
      completion: sql<string>`coalesce(sum(${usageRecords.completionTokens}), 0)`,
      total: sql<string>`coalesce(sum(${usageRecords.totalTokens}), 0)`,
      cost: sql<string>`coalesce(sum(${usageRecords.costUsd}), 0)`,
    })
    .from(usageRecords)
    .where(and(eq(usageRecords.accountId, accountId), gte(usageRecords.createdAt, new Date(range.start)), lt(usageRecords.createdAt, new Date(range.end))))
    .groupBy(group)
    .orderBy(asc(group));
  return {
    object: 'list',
    data: rows.map((r) => ({
      group: r.group,
      requests: Number(r.requests),
      prompt_tokens: Number(r.prompt),
      completion_tokens: Number(r.completion),
      total_tokens: Number(r.total),
      cost_usd: Number(r.cost),
    })),
    start: new Date(range.start).toISOString(),
    end: new Date(range.end).toISOString(),
  };
}
