// Reading instance rows: one by id for its owner, a page of an account's runs, the
// Idempotency-Key lookup, and what a running instance has done so far (the checkpointed
// calls and the events its worker writes). Nothing here changes a row.
import { and, desc, eq, getTableColumns, gte, inArray, not, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { instanceCalls, instanceEvents, instances, type InstanceStatus } from '../db/schema.js';
import type { Usage } from '../providers/types.js';
import type { LadderAccess } from './ladder-access.js';

type Row = typeof instances.$inferSelect;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `id` can name an instance at all (the column is a uuid; anything else would be a database error). */
export const isInstanceId = (id: string) => UUID_RE.test(id);

/** An Idempotency-Key is remembered for 24 hours; rows older than this no longer hold theirs. */
export const idempotencyCutoff = () => sql`now() - interval '24 hours'`;

/** A place in the newest-first order: created_at in UTC to the microsecond, then id. */
export interface ListPosition {
  createdAt: string;
  id: string;
}

export interface ListFilter {
  status?: InstanceStatus;
  author?: string;
  slug?: string;
  /** Rows to answer, 1 to 100. */
  limit: number;
  /** Answer only rows after this one. */
  after?: ListPosition;
  /** The calling key's ladder access list: runs of ladders it excludes are left out. */
  access?: LadderAccess;
}

/** The calls a run has checkpointed so far, summed. */
export interface CallTotals {
  modelCalls: number;
  usage: Usage;
  spendNanos: number;
  /** Of modelCalls, those a rerun reused, and what they cost their source run. */
  reusedCalls: number;
  reusedSpendNanos: number;
}

export interface InstanceEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/** The rows of ladders `access` admits, as a condition (undefined: every row), as mayAccessLadder decides one by one. */
function ladderAccessCondition(access: LadderAccess): SQL | undefined {
  if (access.mode === 'unrestricted') return undefined;
  const wholeAuthors: string[] = [];
  const listed: SQL[] = [];
  for (const entry of access.ladders) {
    const slash = entry.indexOf('/');
    const author = entry.slice(0, slash);
    const slug = entry.slice(slash + 1);
    if (slug === '*') wholeAuthors.push(author);
    else listed.push(and(eq(instances.author, author), eq(instances.slug, slug))!);
  }
  if (wholeAuthors.length > 0) listed.push(inArray(instances.author, wholeAuthors));
  const anyListed = listed.length > 0 ? or(...listed)! : sql`false`;
  return access.mode === 'whitelist' ? anyListed : not(anyListed);
}

// JS dates keep milliseconds, the column microseconds: a cursor must carry the column's own value.
const position = sql<string>`to_char(${instances.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`;

export function createInstanceReads(db: Db) {
  // The reads by id and key are built once: clients poll them, and drizzle builds a query's text
  // anew for each call otherwise (about 100 µs of the main thread for a whole row's).
  const [idParam, accountParam] = [sql.placeholder('id'), sql.placeholder('accountId')];
  const byId = db.select().from(instances).where(eq(instances.id, idParam)).prepare('instance_by_id');
  const owned = db.select().from(instances).where(and(eq(instances.id, idParam), eq(instances.accountId, accountParam))).prepare('instance_owned');
  const owner = db
    .select({ id: instances.id, accountId: instances.accountId, author: instances.author, slug: instances.slug })
    .from(instances)
    .where(eq(instances.id, idParam))
    .prepare('instance_owner');
  const status = db.select({ status: instances.status, finishedAt: instances.finishedAt }).from(instances).where(eq(instances.id, idParam)).prepare('instance_status');
  const byKey = db
    .select()
    .from(instances)
    .where(and(eq(instances.accountId, accountParam), eq(instances.idempotencyKey, sql.placeholder('key')), gte(instances.createdAt, idempotencyCutoff())))
    .prepare('instance_by_idempotency_key');
  return {
    async get(id: string): Promise<Row | null> {
      if (!isInstanceId(id)) return null;
      const [row] = await byId.execute({ id });
      return row ?? null;
    },

    /** The instance if `accountId` owns it; null for anyone else's, an unknown or a malformed id alike. */
    async getOwned(accountId: string, id: string): Promise<Row | null> {
      if (!isInstanceId(id)) return null;
      const [row] = await owned.execute({ id, accountId });
      return row ?? null;
    },

    /** Who owns instance `id` and which ladder it ran, without its answer and trace (which can be large). */
    async ownerOf(id: string): Promise<Pick<Row, 'id' | 'accountId' | 'author' | 'slug'> | null> {
      if (!isInstanceId(id)) return null;
      const [row] = await owner.execute({ id });
      return row ?? null;
    },

    /** Where a run stands, without its answer and trace: for the event streams, which ask often. */
    async statusOf(id: string): Promise<Pick<Row, 'status' | 'finishedAt'> | null> {
      if (!isInstanceId(id)) return null;
      const [row] = await status.execute({ id });
      return row ?? null;
    },

    /** The account's instance started with this Idempotency-Key within the last 24 hours. */
    async findByIdempotencyKey(accountId: string, key: string): Promise<Row | null> {
      const [row] = await byKey.execute({ accountId, key });
      return row ?? null;
    },

    /** A page of the account's instances, newest first, and whether more follow it. */
    async list(accountId: string, filter: ListFilter): Promise<{ rows: Array<Row & { position: ListPosition }>; hasMore: boolean }> {
      const { after } = filter;
      const rows = await db
        .select({ ...getTableColumns(instances), position })
        .from(instances)
        .where(
          and(
            eq(instances.accountId, accountId),
            filter.status ? eq(instances.status, filter.status) : undefined,
            filter.author ? eq(instances.author, filter.author) : undefined,
            filter.slug ? eq(instances.slug, filter.slug) : undefined,
            filter.access ? ladderAccessCondition(filter.access) : undefined,
            after
              ? sql`(${instances.createdAt}, ${instances.id}) < (${after.createdAt}::timestamp at time zone 'UTC', ${after.id}::uuid)`
              : undefined,
          ),
        )
        .orderBy(desc(instances.createdAt), desc(instances.id))
        .limit(filter.limit + 1);
      return {
        rows: rows.slice(0, filter.limit).map((row) => ({ ...row, position: { createdAt: row.position, id: row.id } })),
        hasMore: rows.length > filter.limit,
      };
    },

    /** Checkpointed calls per instance, for runs whose totals are not recorded yet. */
    async callTotals(ids: string[]): Promise<Map<string, CallTotals>> {
      if (ids.length === 0) return new Map();
      const tokens = (name: string) => sql<number>`coalesce(sum((${instanceCalls.usage}->>${name})::float8), 0)::float8`;
      const rows = await db
        .select({
          instanceId: instanceCalls.instanceId,
          calls: sql<number>`count(*)::int`,
          prompt: tokens('prompt_tokens'),
          completion: tokens('completion_tokens'),
          total: tokens('total_tokens'),
          spend: sql<number>`coalesce(sum(${instanceCalls.costNanos}), 0)::float8`,
          reused: sql<number>`count(${instanceCalls.reusedFrom})::int`,
          saved: sql<number>`coalesce(sum(${instanceCalls.savedNanos}), 0)::float8`,
        })
        .from(instanceCalls)
        .where(inArray(instanceCalls.instanceId, ids))
        .groupBy(instanceCalls.instanceId);
      return new Map(
        rows.map((r) => [
          r.instanceId,
          {
            modelCalls: Number(r.calls),
            usage: { prompt_tokens: Number(r.prompt), completion_tokens: Number(r.completion), total_tokens: Number(r.total) },
            spendNanos: Number(r.spend),
            reusedCalls: Number(r.reused),
            reusedSpendNanos: Number(r.saved),
          },
        ]),
      );
    },

    /** The step and node events of a run, in order: the trace of a run still going. */
    async traceEvents(id: string): Promise<InstanceEvent[]> {
      return db
        .select({ seq: instanceEvents.seq, type: instanceEvents.type, data: instanceEvents.data })
        .from(instanceEvents)
        .where(and(eq(instanceEvents.instanceId, id), inArray(instanceEvents.type, ['step.started', 'node.completed', 'node.failed'])))
        .orderBy(instanceEvents.seq);
    },
  };
}
