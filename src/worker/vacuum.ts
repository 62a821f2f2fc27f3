// The autovacuum the embedded database does not have. PGlite runs PostgreSQL as one standalone
// backend, with no autovacuum launcher, so nothing there would ever vacuum or analyze:
// - rows deleted by retention (and row versions left by updates) would keep their space, so the
//   data directory would grow for as long as the service runs, whatever the retention periods;
// - the planner would never get statistics for the tables as they grow;
// - old transaction ids would never be frozen, and a standalone backend, unlike a server, does not
//   stop before the counter wraps around: after 2^31 write transactions, old rows would vanish.
// So after each retention job the service does that job itself, with PostgreSQL's own default
// thresholds, one table per statement so that other statements run in between
// (docs/background-runs.md, "The embedded database's vacuum and checkpoints"). A PostgreSQL
// server has its autovacuum; the service leaves it alone there.
import type { Database } from '../db/client.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';

/** The age past which a table is vacuumed whatever its churn: PostgreSQL's vacuum_freeze_table_age. */
export const FREEZE_TABLE_AGE = 150_000_000;

export interface VacuumResult {
  /** Tables vacuumed, schema-qualified. */
  vacuumed: string[];
  /** Of them, those frozen (due by age). */
  frozen: string[];
  /** Tables analyzed (vacuumed or not). */
  analyzed: string[];
  /** Tables whose statement failed, with why (the next job tries them again); a closed database stops the job instead. */
  failed: { table: string; error: string }[];
}

// Which tables are due, by autovacuum's default thresholds: a vacuum for dead rows over 50 + 20%
// of the live ones, or rows inserted since the last vacuum over 1,000 + 20% (insert-only tables
// need it too, to be frozen and marked all-visible), or for every table of ours when $2 is true;
// a freeze for a relfrozenxid (the table's or its TOAST table's) older than $1, or a relminmxid
// (multixacts: row locks shared by transactions, rare with one backend) as old; an analyze for
// rows changed since the last one over 50 + 10%. Catalogs included: their transaction ids age
// like any other table's.
const DUE_SQL = `
SELECT format('%I.%I', n.nspname, c.relname) AS name,
  coalesce(s.n_dead_tup, 0) > 50 + 0.2 * coalesce(s.n_live_tup, 0)
    OR coalesce(s.n_ins_since_vacuum, 0) > 1000 + 0.2 * coalesce(s.n_live_tup, 0)
    OR ($2::boolean AND n.nspname = 'public') AS vacuum,
  greatest(age(c.relfrozenxid), coalesce(age(t.relfrozenxid), 0), mxid_age(c.relminmxid), coalesce(mxid_age(t.relminmxid), 0)) > $1::int AS freeze,
  coalesce(s.n_mod_since_analyze, 0) > 50 + 0.1 * coalesce(s.n_live_tup, 0) AS analyze
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_class t ON t.oid = c.reltoastrelid
LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid
WHERE c.relkind IN ('r', 'm') AND c.relpersistence = 'p'
ORDER BY c.oid`;

export interface VacuumOptions {
  /**
   * Vacuum every table of ours, due or not. The embedded database's statistics start from zero
   * at every start (PGlite keeps none across a close), so rows that died before it are counted
   * nowhere: the first job of a process vacuums every table once, which costs little where
   * nothing is to do (pages known clean are skipped).
   */
  all?: boolean;
  /** Tests: a lower age than FREEZE_TABLE_AGE. */
  freezeAge?: number;
}

/** Vacuums, freezes and analyzes the tables that are due (DUE_SQL). */
export async function vacuumDue(database: Pick<Database, 'query'>, { all = false, freezeAge = FREEZE_TABLE_AGE }: VacuumOptions = {}): Promise<VacuumResult> {
  // The statistics this backend has gathered reach the views at its next report, not at once.
  await database.query('SELECT pg_stat_force_next_flush()');
  const due = await database.query<{ name: string; vacuum: boolean; freeze: boolean; analyze: boolean }>(DUE_SQL, [freezeAge, all]);
  const result: VacuumResult = { vacuumed: [], frozen: [], analyzed: [], failed: [] };
  for (const { name, vacuum, freeze, analyze } of due) {
    // The name comes from format('%I.%I'): quoted as an identifier by the database itself.
    const statement = vacuum || freeze ? `VACUUM (FREEZE ${freeze}, ANALYZE ${analyze}) ${name}` : analyze ? `ANALYZE ${name}` : null;
    if (!statement) continue;
    try {
      await database.query(statement);
      if (vacuum || freeze) result.vacuumed.push(name);
      if (freeze) result.frozen.push(name);
      if (analyze) result.analyzed.push(name);
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error; // closed meanwhile: the rest would fail alike
      result.failed.push({ table: name, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return result;
}
