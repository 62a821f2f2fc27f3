// Instance rows: one per ladder run, synchronous or background. A synchronous run is
// created `running` and finished by the request that made it; a background run is created
// `pending` for a worker to claim (the columns for claims and leases are in the table).
import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { instances, type InstanceStatus } from '../db/schema.js';
import { wellFormedJson } from '../unicode.js';
import type { ApiError } from '../errors.js';
import type { StepTrace } from '../ladders/run-types.js';
import type { Usage } from '../providers/types.js';

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
}

/** What a run used and did, success or not. */
export interface RunRecord {
  usage: Usage;
  spendUsd: number;
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
    /** Sync runs start `running` at once; async ones wait `pending` for a worker. */
    async create(input: NewInstance): Promise<InstanceRow> {
      const running = input.mode === 'sync';
      const [row] = await db
        .insert(instances)
        .values({ ...input, status: running ? 'running' : 'pending', startedAt: running ? new Date() : null })
        .returning();
      return row!;
    },

    /** Records the outcome; false when the row was already finished. */
    async finish(id: string, outcome: RunOutcome): Promise<boolean> {
      const record = {
        status: outcome.status,
        usage: outcome.usage,
        spendUsd: outcome.spendUsd,
        modelCalls: outcome.modelCalls,
        trace: wellFormedJson(outcome.trace) as unknown[],
        finishedAt: new Date(),
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

    async get(id: string): Promise<InstanceRow | null> {
      const [row] = await db.select().from(instances).where(eq(instances.id, id));
      return row ?? null;
    },
  };
}

export type InstanceService = ReturnType<typeof createInstanceService>;

function errorRecord(error: ApiError) {
  return { status: error.statusCode, type: error.type, code: error.code, message: error.message };
}
