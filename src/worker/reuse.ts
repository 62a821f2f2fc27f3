// A rerun's reuse of its source run's calls (docs/pipelines.md, "Rerun"): the source's recorded
// calls by prompt hash, each to be taken at most once, and the marks that let a resumed rerun
// replay its own reused calls as reused. Reuse never crosses accounts: the source must belong
// to the rerun's account, whatever the row says, or nothing is offered.
import type { Database } from '../db/client.js';
import type { RecordedCall, ReusableCalls } from '../ladders/engine/run-types.js';
import type { Usage } from '../providers/types.js';
import type { RecordedCalls } from './checkpoints.js';

interface SourceCall {
  key: string;
  usage: Usage;
  provider: string | null;
  /** What the source paid, or, for a call it had reused itself, what the first run paid. */
  savedNanos: number;
}

// Source calls already reused by an earlier attempt of this rerun are not offered again.
const SOURCE_CALLS_SQL = `
SELECT s.id AS source_id, c.call_key, c.prompt_hash, c.usage, c.provider, coalesce(c.saved_nanos, c.cost_nanos) AS saved_nanos
FROM instances n
JOIN instances s ON s.id = n.rerun_of AND s.account_id = n.account_id AND s.status IN ('completed', 'failed', 'cancelled')
JOIN instance_calls c ON c.instance_id = s.id
WHERE n.id = $1 AND c.prompt_hash IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM instance_calls m WHERE m.instance_id = n.id AND m.reused_from = c.call_key)`;

/**
 * The source calls rerun `instanceId` may reuse, or null when there are none. Outputs are read
 * when taken, so a rerun holds no more output text than a fresh run would.
 */
export async function loadReusableCalls(database: Pick<Database, 'query'>, instanceId: string): Promise<(ReusableCalls & { size: number }) | null> {
  const rows = await database.query<{ source_id: string; call_key: string; prompt_hash: string; usage: Usage; provider: string | null; saved_nanos: number | string }>(
    SOURCE_CALLS_SQL,
    [instanceId],
  );
  if (rows.length === 0) return null;
  const sourceId = rows[0]!.source_id;
  const byHash = new Map<string, SourceCall[]>();
  // Key order, so that which of several identical calls a node gets does not depend on the database.
  rows.sort((a, b) => (a.call_key < b.call_key ? -1 : a.call_key > b.call_key ? 1 : 0));
  for (const r of rows) {
    const list = byHash.get(r.prompt_hash) ?? [];
    list.push({ key: r.call_key, usage: r.usage, provider: r.provider, savedNanos: Number(r.saved_nanos) });
    byHash.set(r.prompt_hash, list);
  }
  return {
    size: rows.length,
    take(hash, key) {
      const list = byHash.get(hash);
      if (!list || list.length === 0) return undefined;
      // The call at the same place first: an unchanged step reuses each node's own answer.
      const at = Math.max(0, list.findIndex((c) => c.key === key));
      const [source] = list.splice(at, 1);
      return readOutput(database, sourceId, source!);
    },
  };
}

async function readOutput(database: Pick<Database, 'query'>, sourceId: string, source: SourceCall): Promise<RecordedCall | undefined> {
  const [row] = await database.query<{ output: string }>('select output from instance_calls where instance_id = $1 and call_key = $2', [sourceId, source.key]);
  // Gone (the source was deleted meanwhile): the call is made after all.
  if (!row) return undefined;
  return { output: row.output, usage: source.usage, costNanos: 0, provider: source.provider, latencyMs: 0, reused: { from: source.key, savedNanos: source.savedNanos } };
}

/** A resumed rerun's checkpoints, with the calls an earlier attempt reused marked as such. */
export async function withReuseMarks(database: Pick<Database, 'query'>, instanceId: string, recorded: RecordedCalls): Promise<RecordedCalls> {
  const rows = await database.query<{ call_key: string; reused_from: string; saved_nanos: number | string | null }>(
    'select call_key, reused_from, saved_nanos from instance_calls where instance_id = $1 and reused_from is not null',
    [instanceId],
  );
  if (rows.length === 0) return recorded;
  const marks = new Map(rows.map((r) => [r.call_key, { from: r.reused_from, savedNanos: Number(r.saved_nanos ?? 0) }]));
  return {
    size: recorded.size,
    async get(key) {
      const call = await recorded.get(key);
      const mark = marks.get(key);
      return call && mark ? { ...call, reused: mark } : call;
    },
  };
}
