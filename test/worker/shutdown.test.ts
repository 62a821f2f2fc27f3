// Closing a process hands its background runs back as pending (the attempt not counted) for
// another process to resume from their checkpoints; synchronous runs hold a lease too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { minimalLadder } from '../ladders/examples.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, type TestApp } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';
import { callKeys, events, insertPending, instance, waitFor, waitForStatus } from '../helpers/instances.js';

const env = (fake: FakeVendor, extra: Record<string, string> = {}) => ({
  PROVIDER_BASE_URL_OPENAI: fake.baseUrl,
  LADDER_MAX_CONCURRENT_CALLS: '1',
  WORKER_POLL_MS: '200',
  RUN_LEASE_MS: '1000',
  RUN_CANCEL_CHECK_MS: '100',
  SHUTDOWN_TIMEOUT_MS: '300',
  ...extra,
});

describe('shutdown and synchronous leases', () => {
  let fake: FakeVendor;
  let database: Database;
  let first: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  let ladderId: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    database = await openTestDatabase();
    first = await build(env(fake, { WORKER_CONCURRENCY: '1' }), { database });
    user = await createUser(first.app);
    await first.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
    const saved = await first.app.inject({ method: 'PUT', url: `/v1/${user.username}/minimal`, headers: user.headers, payload: { config: minimalLadder } });
    ladderId = saved.json<{ id: string }>().id;
  });
  afterAll(async () => {
    await fake.close();
    await database.close();
  });

  it('a synchronous run holds a lease (fence 1) while it runs, and gives it up when it ends', async () => {
    fake.script({ kind: 'delay', ms: 600 });
    const done = first.app.inject({ method: 'POST', url: `/v1/${user.username}/minimal/chat/completions`, headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'sync' }] } });
    const [running] = await waitFor(async () => {
      const rows = await database.query<Record<string, any>>(`select * from instances where mode = 'sync' and status = 'running'`);
      return rows.length ? rows : null;
    }, 10_000, 'the sync row');
    expect(running).toMatchObject({ fence: 1, attempts: 1, claimed_by: first.app.runHolder, steps_total: 2 });
    expect(running!.lease_expires_at.getTime()).toBeGreaterThan(Date.now());
    const res = await done;
    expect(res.statusCode).toBe(200);
    const row = await instance(database, running!.id);
    expect(row).toMatchObject({ status: 'completed', claimed_by: null, lease_expires_at: null, model_calls: 2, steps_completed: 2 });
    expect(await callKeys(database, row.id)).toEqual(['1.draft.1', '1.refine.1']);
    expect((await events(database, row.id)).map((e) => e.type).at(-1)).toBe('instance.completed');
    fake.reset();
  });

  it('a synchronous run taken over mid-run answers 503 run_interrupted, not its answer, and writes nothing more', async () => {
    fake.script({ kind: 'delay', ms: 600 });
    const done = first.app.inject({ method: 'POST', url: `/v1/${user.username}/minimal/chat/completions`, headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stolen' }] } });
    const [running] = await waitFor(async () => {
      const rows = await database.query<Record<string, any>>(`select * from instances where mode = 'sync' and status = 'running' and input = 'stolen'`);
      return rows.length ? rows : null;
    }, 10_000, 'the sync row');
    await database.query(`update instances set fence = fence + 1, claimed_by = 'thief' where id = $1`, [running!.id]);
    const res = await done;
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: { type: 'api_error', code: 'run_interrupted' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await instance(database, running!.id)).toMatchObject({ status: 'running', fence: 2, claimed_by: 'thief', answer: null, finished_at: null });
    expect(await callKeys(database, running!.id)).toEqual([]);
    expect((await events(database, running!.id)).map((e) => e.type)).not.toContain('instance.completed');
    await database.query(`update instances set status = 'failed', finished_at = now() where id = $1`, [running!.id]);
    fake.reset();
  });

  it('on close, hands a run it could not finish in time back as pending; another process resumes it', async () => {
    fake.script({ kind: 'delay', ms: 0 });
    fake.setDefault({ kind: 'delay', ms: 10_000 });
    const id = await insertPending(database, { ladderId, ladderVersion: 1, author: user.username, slug: 'minimal', accountId: user.id, input: 'handed back' });
    await first.app.runNotices.pendingCreated();
    await waitFor(() => fake.requests.length === 2, 10_000, 'the second call');
    await first.close();
    expect(fake.requests[1]!.abortedAt).toBeDefined();
    const released = await instance(database, id);
    expect(released).toMatchObject({ status: 'pending', attempts: 0, fence: 2, claimed_by: null, lease_expires_at: null, finished_at: null });
    expect(released.started_at).not.toBeNull();
    expect(await callKeys(database, id)).toEqual(['1.draft.1']);
    expect((await events(database, id)).at(-1)).toMatchObject({ type: 'instance.released' });

    fake.setDefault(null);
    const second = await build(env(fake, { WORKER_CONCURRENCY: '1' }), { database });
    try {
      const row = await waitForStatus(database, id, ['completed', 'failed']);
      expect(row).toMatchObject({ status: 'completed', attempts: 1, fence: 3, model_calls: 2 });
      const prompts = fake.requests.map((r) => r.body.messages[0].content as string);
      // The draft was paid once; only the refine call that was in flight is made again.
      expect(prompts.filter((p) => p.startsWith('Question: handed back\n\n[System'))).toHaveLength(1);
      expect(prompts).toHaveLength(3);
      expect((await events(database, id)).find((e) => e.type === 'instance.started' && e.data.resumed)).toMatchObject({ data: { attempt: 1, recorded_calls: 1 } });
    } finally {
      await second.close();
    }
  });
});
