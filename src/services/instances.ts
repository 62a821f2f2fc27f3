// Instance rows: one per ladder run, synchronous or background. A synchronous run is
// created `running` and finished by the request that made it; a background run is created
// `pending` for a worker to claim (the columns for claims and leases are in the table).
// Every change of status here is one conditional UPDATE, so racing requests and workers
// never overwrite each other's transition.
import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { instances, type InstanceStatus } from '../db/schema.js';
import { wellFormedJson } from '../unicode.js';
import { internalError, type ApiError } from '../errors.js';
import type { StepTrace } from '../ladders/engine/run-types.js';
import type { Usage } from '../providers/types.js';
import { createInstanceReads, idempotencyCutoff, isInstanceId } from './instance-reads.js';
import { enqueueInstanceEnded } from '../webhooks/enqueue.js';

export type InstanceRow = typeof instances.$inferSelect;

export interface NewInstance {
  ladderId: string;
  ladderVersion: number;
  author: string;
  slug: string;
  accountId: string;
  apiKeyId: string | null;
  mode: 'sync' | 'async';
  model: string;
  input: string;
  knobs: Record<string, number>;
  /** Step executions a successful run makes; 0 when unknown. */
  stepsTotal?: number;
  /** The finished instance this one reruns, reusing its calls (docs/pipelines.md, "Rerun"). */
  rerunOf?: string;
  /** A background run's queuing request, as a W3C traceparent (docs/observability.md). */
  traceParent?: string | null;
}

/** A background run to queue, with the caller's Idempotency-Key and the hash of its body. */
export interface NewPendingInstance extends Omit<NewInstance, 'mode'> {
  idempotency: { key: string; requestHash: string } | null;
}

/** What a run used and did, success or not. */
export interface RunRecord {
  usage: Usage;
  spendNanos: number;
  modelCalls: number;
  trace: StepTrace[];
}

export type RunOutcome =
  | ({ status: 'completed'; answer: string } & RunRecord)
  | ({ status: 'failed' | 'cancelled'; error: ApiError } & RunRecord);

// A finished row is final: a late second finish (say, after a lease was lost) changes nothing.
const UNFINISHED: InstanceStatus[] = ['pending', 'running'];

export function createInstanceService(db: Db) {
  return {
    ...createInstanceReads(db),

    /** Sync runs start `running` at once (their one attempt); async ones wait `pending` for a worker. */
    async create(input: NewInstance): Promise<InstanceRow> {
      const running = input.mode === 'sync';
      const [row] = await db
        .insert(instances)
        .values({ ...input, status: running ? 'running' : 'pending', startedAt: running ? new Date() : null, attempts: running ? 1 : 0 })
        .returning();
      return row!;
    },

    /**
     * Queues a background run. With an Idempotency-Key, concurrent starts with the same key
     * make one row: the unique (account, key) index lets one insert through, and the others
     * read that row back (`created: false`; the caller compares the request hashes). A key
     * older than the idempotency window is released first, in the same transaction, so it
     * is free again even before the retention job clears it.
     */
    async createPending(input: NewPendingInstance): Promise<{ instance: InstanceRow; created: boolean }> {
      const { idempotency, ...fields } = input;
      const values = { ...fields, mode: 'async' as const, status: 'pending' as const };
      if (!idempotency) {
        const [row] = await db.insert(instances).values(values).returning();
        return { instance: row!, created: true };
      }
      const byKey = and(eq(instances.accountId, input.accountId), eq(instances.idempotencyKey, idempotency.key));
      return db.transaction(async (tx) => {
        await tx
          .update(instances)
          .set({ idempotencyKey: null })
          .where(and(byKey, lt(instances.createdAt, idempotencyCutoff())));
        const [row] = await tx
          .insert(instances)
          .values({ ...values, idempotencyKey: idempotency.key, requestHash: idempotency.requestHash })
          .onConflictDoNothing({ target: [instances.accountId, instances.idempotencyKey], where: sql`${instances.idempotencyKey} is not null` })
          .returning();
        if (row) return { instance: row, created: true };
        const [existing] = await tx.select().from(instances).where(byKey);
        // The conflicting row is committed (the insert waited for it), so it is there to read.
        if (!existing) throw internalError();
        return { instance: existing, created: false };
      });
    },

    /** Cancels a run no worker has claimed yet; null when the row is not the caller's pending one. */
    async cancelPending(accountId: string, id: string, error: ApiError): Promise<InstanceRow | null> {
      if (!isInstanceId(id)) return null;
      // webhooks: the cancel and its deliveries commit together (docs/webhooks.md).
      return db.transaction(async (tx) => {
        const [row] = await tx
          .update(instances)
          .set({
            status: 'cancelled',
            error: errorRecord(error),
            usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
            trace: [],
            // One clock for both times: the request to cancel is what finished the run.
            finishedAt: sql`now()`,
            cancelRequestedAt: sql`coalesce(${instances.cancelRequestedAt}, now())`,
          })
          .where(and(eq(instances.id, id), eq(instances.accountId, accountId), eq(instances.status, 'pending')))
          .returning();
        if (row) await enqueueInstanceEnded(tx, row);
        return row ?? null;
      });
    },

    /**
     * Marks a running run for cancellation (the first request's time is kept); the process
     * running it stops it. Null when the row is not the caller's running one.
     */
    async requestCancel(accountId: string, id: string): Promise<InstanceRow | null> {
      if (!isInstanceId(id)) return null;
      const [row] = await db
        .update(instances)
        .set({ cancelRequestedAt: sql`coalesce(${instances.cancelRequestedAt}, now())` })
        .where(and(eq(instances.id, id), eq(instances.accountId, accountId), eq(instances.status, 'running')))
        .returning();
      return row ?? null;
    },

    /** Records the outcome; false when the row was already finished. */
    async finish(id: string, outcome: RunOutcome, finishedAt = new Date()): Promise<boolean> {
      const record = {
        status: outcome.status,
        usage: outcome.usage,
        spendNanos: outcome.spendNanos,
        modelCalls: outcome.modelCalls,
        trace: wellFormedJson(outcome.trace) as unknown[],
        finishedAt,
        claimedBy: null,
        leaseExpiresAt: null,
      };
      const values =
        outcome.status === 'completed'
          ? { ...record, answer: outcome.answer, error: null }
          : { ...record, answer: null, error: wellFormedJson(errorRecord(outcome.error)) };
      const updated = await db
        .update(instances)
        .set(values)
        .where(and(eq(instances.id, id), inArray(instances.status, UNFINISHED)))
        .returning({ id: instances.id });
      return updated.length > 0;
    },
  };
}

export type InstanceService = ReturnType<typeof createInstanceService>;

function errorRecord(error: ApiError) {
  return { status: error.statusCode, type: error.type, code: error.code, message: error.message };
}
