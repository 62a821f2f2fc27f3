// The checkpoints the embedded database does not make itself. PGlite runs PostgreSQL as one
// standalone backend, with no checkpointer process: its write-ahead log is only checkpointed
// when it closes, so while the service runs, pg_wal grows by every byte written (measured:
// 46 segments, 736 MB, for 700 MB of writes, its last checkpoint never moving), and a crash
// would replay all of it at the next start. The service asks for a checkpoint itself, as a
// server's checkpointer would, by the amount written or the time passed since the last one;
// after one, the log's old segments are reused instead of new ones added. A PostgreSQL server
// checkpoints on its own: nothing is asked of it (src/plugins/infrastructure.ts).
import type { Database } from './client.js';

/** How often the embedded database is asked whether a checkpoint is due. */
export const CHECKPOINT_CHECK_MS = 30_000;

export interface CheckpointLimits {
  /** Log written since the last checkpoint that calls for one (a server's default max_wal_size is 1 GB; smaller here bounds the files and the replay). */
  walBytes: number;
  /** Time since the last checkpoint that calls for one, when anything was written (a server's checkpoint_timeout). */
  ageMs: number;
}

export const CHECKPOINT_LIMITS: CheckpointLimits = { walBytes: 64 * 1024 * 1024, ageMs: 5 * 60_000 };

/** The log a checkpoint itself writes, with room to spare: less than this since the last one is nothing to checkpoint. */
const IDLE_WAL_BYTES = 1024;

const DUE_SQL = `
SELECT (pg_current_wal_lsn() - checkpoint_lsn)::float8 AS bytes, extract(epoch FROM now() - checkpoint_time)::float8 * 1000 AS age_ms
FROM pg_control_checkpoint()`;

export interface CheckpointTaken {
  /** Log written since the checkpoint before. */
  walBytes: number;
  /** How long the checkpoint held the database. */
  ms: number;
}

/** Checkpoints the database when `limits` say one is due; null when none was. */
export async function checkpointIfDue(database: Pick<Database, 'query'>, limits: CheckpointLimits = CHECKPOINT_LIMITS): Promise<CheckpointTaken | null> {
  const [due] = await database.query<{ bytes: number; age_ms: number }>(DUE_SQL, [], 'embedded_checkpoint_due');
  if (!due || due.bytes < IDLE_WAL_BYTES || (due.bytes < limits.walBytes && due.age_ms < limits.ageMs)) return null;
  const started = performance.now();
  await database.query('CHECKPOINT');
  return { walBytes: due.bytes, ms: performance.now() - started };
}
