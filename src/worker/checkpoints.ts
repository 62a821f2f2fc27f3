// Checkpoints: every finished model call of a run, kept in instance_calls under its call key
// (see callKey in src/ladders/engine/interpreter.ts) so that a resumed run replays it rather than
// paying for it again. Written by the journal together with the call's event.
import type { Database } from '../db/client.js';
import type { RecordedCall } from '../ladders/engine/run-types.js';
import type { Usage } from '../providers/types.js';

export interface RecordedCalls {
  size: number;
  get(key: string): Promise<RecordedCall | undefined>;
}

interface CallMeta {
  usage: Usage;
  costNanos: number;
  provider: string | null;
  latencyMs: number;
}

/**
 * The calls an earlier attempt of the instance finished. Only their keys and accounting are
 * loaded up front; an output is read when the run reaches its call, so a resumed run never
 * holds more output text than a fresh one would.
 */
export async function loadRecordedCalls(database: Pick<Database, 'query'>, instanceId: string): Promise<RecordedCalls> {
  const rows = await database.query<{ call_key: string; usage: Usage; cost_nanos: number | string; provider: string | null; latency_ms: number }>(
    'select call_key, usage, cost_nanos, provider, latency_ms from instance_calls where instance_id = $1',
    [instanceId],
  );
  const calls = new Map<string, CallMeta>(
    rows.map((r) => [r.call_key, { usage: r.usage, costNanos: Number(r.cost_nanos), provider: r.provider, latencyMs: r.latency_ms }]),
  );
  return {
    size: calls.size,
    async get(key) {
      const meta = calls.get(key);
      if (!meta) return undefined;
      const [row] = await database.query<{ output: string }>('select output from instance_calls where instance_id = $1 and call_key = $2', [instanceId, key]);
      return row ? { ...meta, output: row.output } : undefined;
    },
  };
}

/** The last event number of an instance, for a resumed run to go on from. */
export async function lastEventSeq(database: Pick<Database, 'query'>, instanceId: string): Promise<number> {
  const [row] = await database.query<{ seq: number | null }>('select max(seq) as seq from instance_events where instance_id = $1', [instanceId]);
  return Number(row?.seq ?? 0);
}
