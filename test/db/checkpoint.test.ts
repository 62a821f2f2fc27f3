// The embedded database's checkpoints (src/db/checkpoint.ts): it has no checkpointer process, so
// the service asks for one by the log written or the time passed since the last; with them its
// log's old segments are reused, where without them one is added for every 16 MB written.
// PGlite only: on a PostgreSQL server a CHECKPOINT is the whole cluster's, and its own to make.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointIfDue } from '../../src/db/checkpoint.js';
import type { Database } from '../../src/db/client.js';
import { openTestDatabase } from '../helpers/database.js';

const MB = 1024 * 1024;

describe.skipIf(!!process.env.TEST_DATABASE_URL)('checkpointIfDue on the embedded database', () => {
  let database: Database;
  beforeEach(async () => {
    database = await openTestDatabase();
    await database.query('CREATE TABLE filler (id int, pad text)');
    await database.query('CHECKPOINT');
  });
  afterEach(async () => {
    await database.close();
  });

  const lastCheckpoint = async () => (await database.query<{ lsn: string }>('SELECT checkpoint_lsn::text AS lsn FROM pg_control_checkpoint()'))[0]!.lsn;
  const segments = async () => (await database.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$'`))[0]!.n;
  /** Writes about `mb` MB of log: rows of 1 KB, inserted then deleted. */
  const write = async (mb: number) => {
    await database.query(`INSERT INTO filler SELECT g, repeat(md5(g::text), 32) FROM generate_series(1, $1::int) g`, [mb * 1000]);
    await database.query('DELETE FROM filler');
  };

  it('checkpoints once the log written since the last checkpoint reaches the limit, and not again until more is written', async () => {
    const before = await lastCheckpoint();
    await write(2);
    expect(await checkpointIfDue(database, { walBytes: 8 * MB, ageMs: 3_600_000 })).toBeNull();
    expect(await lastCheckpoint()).toBe(before);
    const taken = await checkpointIfDue(database, { walBytes: 1 * MB, ageMs: 3_600_000 });
    expect(taken!.walBytes).toBeGreaterThan(1 * MB);
    expect(await lastCheckpoint()).not.toBe(before);
    // Only the checkpoint's own record since: nothing to checkpoint, however old it gets.
    expect(await checkpointIfDue(database, { walBytes: 1, ageMs: 0 })).toBeNull();
  });

  it('checkpoints a little log once the last checkpoint is older than the age limit', async () => {
    await database.query(`INSERT INTO filler VALUES (1, 'x')`);
    expect(await checkpointIfDue(database, { walBytes: 1024 * MB, ageMs: 3_600_000 })).toBeNull();
    const before = await lastCheckpoint();
    const taken = await checkpointIfDue(database, { walBytes: 1024 * MB, ageMs: 0 });
    expect(taken!.walBytes).toBeLessThan(1 * MB);
    expect(await lastCheckpoint()).not.toBe(before);
  });

  it('keeps the log to the segments it has, where without checkpoints every 16 MB written adds one', async () => {
    const start = await segments();
    for (let round = 0; round < 3; round++) await write(12);
    const grown = await segments();
    expect(grown).toBeGreaterThanOrEqual(start + 2);
    await checkpointIfDue(database, { walBytes: 8 * MB, ageMs: 3_600_000 });
    for (let round = 0; round < 3; round++) {
      await write(12);
      expect(await checkpointIfDue(database, { walBytes: 8 * MB, ageMs: 3_600_000 })).not.toBeNull();
    }
    expect(await segments()).toBeLessThanOrEqual(grown);
  });
});
