// Real processes: a server killed (SIGKILL) in the middle of background runs is restarted and
// every run completes with the right answer, no finished call paid twice, on PostgreSQL and on
// the embedded database (restarted on the same DATA_DIR); on PostgreSQL three servers share
// 300 instances while one of them is killed, and each call is made once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { minimalLadder } from '../ladders/examples.js';
import { startFakeOpenAI, type FakeVendor, type RecordedRequest } from '../fakes/vendors.js';
import { build, createUser, type TestApp } from '../helpers/build.js';
import { embeddedDataDir } from '../helpers/database.js';
import { insertPending, waitFor } from '../helpers/instances.js';
import { getJson, scratchPostgres, spawnServer, type SpawnedServer } from '../helpers/spawned-server.js';

const serverUrl = process.env.TEST_DATABASE_URL;
const echo = (p: string) => `echo: ${p}`;
const draftPrompt = (q: string) => `Question: ${q}\n\n[System Instruction]\nAnswer the question.`;
const answerFor = (q: string) =>
  echo(`Question: ${q}\n\nDraft: ${echo(draftPrompt(q))}\n\n[System Instruction]\nImprove the draft so that it answers the question better. Reply with the improved answer only.`);

/** Small leases and quick polls, so that a killed server's runs are taken over within a second or two. */
const WORKER_ENV = { WORKER_CONCURRENCY: '4', WORKER_POLL_MS: '200', RUN_LEASE_MS: '1000', RUN_CANCEL_CHECK_MS: '200', LADDER_MAX_CONCURRENT_CALLS: '2' };

const promptOf = (r: RecordedRequest) => r.body.messages[0].content as string;

/** Prompts the vendor answered more than once. */
function answeredTwice(fake: FakeVendor): Map<string, number[]> {
  const answered = new Map<string, number[]>();
  for (const r of fake.requests) {
    if (r.answeredAt === undefined) continue;
    answered.set(promptOf(r), [...(answered.get(promptOf(r)) ?? []), r.answeredAt]);
  }
  return new Map([...answered].filter(([, times]) => times.length > 1));
}

/**
 * From now on the vendor holds every new call; resolves once every call asked before is answered,
 * each running run waits on a held one and `stored()` (the calls checkpointed) counts every call
 * answered. Until the kill that follows, no run can finish or move on (on a busy machine one did,
 * between reading what runs and the kill), and every call answered so far is checkpointed (a
 * call goes out while the checkpoint before it is being written). Resolves to what `running`
 * last read.
 */
async function holdEveryRun<T extends unknown[]>(fake: FakeVendor, running: () => Promise<T>, stored: () => Promise<number>): Promise<T> {
  const heldFrom = fake.requests.length;
  fake.setDefault({ kind: 'delay', ms: 600_000 });
  return waitFor(async () => {
    if (!fake.requests.slice(0, heldFrom).every((r) => r.answeredAt !== undefined || r.clientClosed)) return null;
    const runs = await running();
    const held = fake.requests.slice(heldFrom).filter((r) => r.answeredAt === undefined && !r.clientClosed).length;
    if (runs.length === 0 || runs.length !== held) return null;
    return (await stored()) === fake.requests.filter((r) => r.answeredAt !== undefined).length && runs;
  }, 30_000, 'every running run to wait on a held call, with every answered call checkpointed');
}

describe.skipIf(!serverUrl)('background runs across processes (PostgreSQL)', () => {
  let fake: FakeVendor;
  let scratch: Awaited<ReturnType<typeof scratchPostgres>>;
  let setup: TestApp;
  let database: Database;
  let user: Awaited<ReturnType<typeof createUser>>;
  let ladderId: string;
  const servers: SpawnedServer[] = [];

  const serverEnv = () => ({ DATABASE_URL: scratch.url, PROVIDER_BASE_URL_OPENAI: fake.baseUrl, ...WORKER_ENV });
  const start = async () => {
    const server = await spawnServer(serverEnv());
    servers.push(server);
    return server;
  };
  const pending = (input: string) =>
    insertPending(database, { ladderId, ladderVersion: 1, author: user.username, slug: 'minimal', accountId: user.id, input });
  const statuses = async (ids: string[]) =>
    database.query<{ id: string; status: string; answer: string | null; input: string; attempts: number }>(
      'select id, status, answer, input, attempts from instances where id = any($1::uuid[])',
      [ids],
    );
  const notify = () => database.query(`select pg_notify('ladder_instance_pending', '')`);

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    scratch = await scratchPostgres(serverUrl!);
    database = scratch.database;
    setup = await build({ WORKER_CONCURRENCY: '0', PROVIDER_BASE_URL_OPENAI: fake.baseUrl }, { database });
    user = await createUser(setup.app);
    await setup.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
    ladderId = (await setup.app.inject({ method: 'PUT', url: `/v1/${user.username}/minimal`, headers: user.headers, payload: { config: minimalLadder } })).json<{ id: string }>().id;
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()));
    await setup?.close();
    await fake?.close();
    await scratch?.drop();
  });

  it('SIGKILL mid-run, restart: every instance completes with the right answer, no finished call paid twice', async () => {
    fake.reset();
    fake.setDefault({ kind: 'delay', ms: 300 });
    const inputs = Array.from({ length: 8 }, (_, i) => `crash question ${i}`);
    const ids: string[] = [];
    for (const input of inputs) ids.push(await pending(input));
    const first = await start();
    await notify();
    await waitFor(() => fake.requests.filter((r) => r.answeredAt).length >= 6, 30_000, 'some calls to be answered');
    const stored = async () => (await database.query<{ n: number }>('select count(*)::int as n from instance_calls where instance_id = any($1::uuid[])', [ids]))[0]!.n;
    await holdEveryRun(fake, async () => (await statuses(ids)).filter((r) => r.status === 'running'), stored);
    await first.kill();
    fake.setDefault({ kind: 'delay', ms: 300 });

    await start();
    await waitFor(async () => (await statuses(ids)).every((r) => r.status !== 'pending' && r.status !== 'running'), 60_000, 'every instance to finish');
    for (const row of await statuses(ids)) {
      expect(row).toMatchObject({ status: 'completed', answer: answerFor(row.input) });
    }
    const calls = await database.query<{ n: number }>('select count(*)::int as n from instance_calls where instance_id = any($1::uuid[]) group by instance_id', [ids]);
    expect(calls.map((c) => c.n)).toEqual(ids.map(() => 2));
    // The calls the kill cut were never answered; every answered one was checkpointed before it.
    expect([...answeredTwice(fake).keys()]).toEqual([]);
  }, 120_000);

  it('three processes share 300 instances while one is killed: all complete, each call checkpointed once, none ran in two places', async () => {
    fake.reset();
    fake.setDefault({ kind: 'delay', ms: 20 });
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push(await pending(`shared question ${i}`));
    const [victim] = [await start(), await start(), await start()];
    await notify();
    await waitFor(async () => {
      const [row] = await database.query<{ n: number }>(`select count(*)::int as n from instances where id = any($1::uuid[]) and status = 'completed'`, [ids]);
      return row!.n >= 60;
    }, 60_000, 'a fifth of the instances');
    await victim!.kill();
    const killedAt = Date.now();
    await waitFor(async () => (await statuses(ids)).every((r) => r.status === 'completed' || r.status === 'failed'), 120_000, 'every instance to finish');
    const rows = await statuses(ids);
    for (const row of rows) expect(row).toMatchObject({ status: 'completed', answer: answerFor(row.input) });
    const [calls] = await database.query<{ n: number; instances: number }>(
      'select count(*)::int as n, count(distinct instance_id)::int as instances from instance_calls where instance_id = any($1::uuid[])',
      [ids],
    );
    expect(calls).toEqual({ n: 600, instances: 300 });
    // Vendor requests per instance: its two calls, plus at most those the kill cut: the one in
    // flight and, when the kill came while the checkpoint before it was being written, that call.
    const perInput = new Map<string, number>();
    for (const r of fake.requests) {
      const input = /^Question: (shared question \d+)\n/.exec(promptOf(r))?.[1];
      if (input) perInput.set(input, (perInput.get(input) ?? 0) + 1);
    }
    for (const row of rows) expect(perInput.get(row.input), row.input).toBeLessThanOrEqual(row.attempts > 1 ? 4 : 2);
    for (const [prompt, times] of answeredTwice(fake)) expect(times[0], prompt).toBeGreaterThan(killedAt - 1_000);
    expect(rows.filter((r) => r.attempts > 1).length).toBeLessThanOrEqual(4);
  }, 240_000);
});

describe.skipIf(serverUrl)('a background run across a SIGKILL (embedded database)', () => {
  let fake: FakeVendor;
  const servers: SpawnedServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()));
    await fake?.close();
  });

  it('restarted on the same DATA_DIR: every instance completes with the right answer, no finished call paid twice', async () => {
    fake = await startFakeOpenAI();
    fake.setDefault({ kind: 'delay', ms: 300 });
    const dataDir = await embeddedDataDir();
    const open = () => openDatabase({ url: null, dataDir });

    // The account, its connection, the ladder and the pending runs, written before any server opens the files.
    const database = await open();
    const setup = await build({ WORKER_CONCURRENCY: '0' }, { database });
    const user = await createUser(setup.app);
    await setup.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
    const ladderId = (await setup.app.inject({ method: 'PUT', url: `/v1/${user.username}/minimal`, headers: user.headers, payload: { config: minimalLadder } })).json<{ id: string }>().id;
    const inputOf = new Map<string, string>();
    for (let i = 0; i < 8; i++) {
      const input = `crash question ${i}`;
      inputOf.set(await insertPending(database, { ladderId, ladderVersion: 1, author: user.username, slug: 'minimal', accountId: user.id, input }), input);
    }
    await setup.close();
    await database.close();

    const start = async () => {
      // LOG_LEVEL info: its "Server listening at" line tells the URL.
      const server = await spawnServer({ DATA_DIR: dataDir, LOG_LEVEL: 'info', PROVIDER_BASE_URL_OPENAI: fake.baseUrl, ...WORKER_ENV });
      servers.push(server);
      return server;
    };
    type Listed = { data: Array<{ instanceId: string; status: string; attempts: number; progress: { model_calls: number } }> };
    const list = async (server: SpawnedServer) => {
      const res = await getJson<Listed>(server, '/v1/pipelines/instances?limit=100', user.headers);
      expect(res.status).toBe(200);
      return res.body.data;
    };

    const first = await start();
    await waitFor(() => fake.requests.filter((r) => r.answeredAt).length >= 6, 30_000, 'some calls to be answered');
    // The runs listed are exactly the ones the kill interrupts.
    // Each run's calls are sequential: the calls its row counts are its calls checkpointed.
    const stored = async () => (await list(first)).reduce((sum, i) => sum + i.progress.model_calls, 0);
    const running = await holdEveryRun(fake, async () => (await list(first)).filter((i) => i.status === 'running').map((i) => i.instanceId), stored);
    await first.kill();
    fake.setDefault({ kind: 'delay', ms: 300 });

    const second = await start();
    const finished = await waitFor(async () => {
      const rows = await list(second);
      return rows.every((r) => r.status !== 'pending' && r.status !== 'running') && rows;
    }, 60_000, 'every instance to finish');
    expect(finished).toHaveLength(8);
    for (const id of inputOf.keys()) {
      const res = await getJson(second, `/v1/pipelines/instances/${id}`, user.headers);
      expect(res.body).toMatchObject({ status: 'completed', result: { choices: [{ message: { content: answerFor(inputOf.get(id)!) } }] } });
    }
    // The runs the kill interrupted were taken up again by the restarted server.
    for (const id of running) expect(finished.find((r) => r.instanceId === id)).toMatchObject({ status: 'completed', attempts: 2 });
    await second.stop();

    const after = await open();
    try {
      const calls = await after.query<{ n: number }>('select count(*)::int as n from instance_calls group by instance_id');
      expect(calls.map((c) => c.n)).toEqual([...inputOf.keys()].map(() => 2));
    } finally {
      await after.close();
    }
    // The calls the kill cut were never answered; every answered one was checkpointed before it.
    expect([...answeredTwice(fake).keys()]).toEqual([]);
  }, 120_000);
});
