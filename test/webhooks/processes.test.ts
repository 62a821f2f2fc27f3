// A crash between attempts: the built server, spawned, makes a delivery's first attempt (the
// receiver answers 500) and is SIGKILLed before the retry; restarted on the same database, it
// makes the retry and the delivery arrives, signed, with the same webhook-id and body. On
// PostgreSQL (TEST_DATABASE_URL) and on the embedded database (same DATA_DIR).
import { afterAll, describe, expect, it } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { openDatabase, type Database } from '../../src/db/client.js';
import { minimalLadder } from '../ladders/examples.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { build, createUser } from '../helpers/build.js';
import { embeddedDataDir } from '../helpers/database.js';
import { waitFor } from '../helpers/instances.js';
import { scratchPostgres, spawnServer, type SpawnedServer } from '../helpers/spawned-server.js';

const serverUrl = process.env.TEST_DATABASE_URL;
const SERVER_ENV = { WORKER_CONCURRENCY: '2', WORKER_POLL_MS: '200', WEBHOOK_TIMEOUT_MS: '1000' };

describe('a webhook delivery across a SIGKILL', () => {
  let fake: FakeVendor;
  let receiver: WebhookReceiver;
  const servers: SpawnedServer[] = [];
  const cleanup: Array<() => Promise<void>> = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()));
    for (const step of cleanup) await step();
    await receiver?.close();
    await fake?.close();
  });

  it('the first attempt fails, the server dies, the restarted one delivers it', async () => {
    fake = await startFakeOpenAI();
    receiver = await startWebhookReceiver();
    receiver.script([500]);
    let database: Database;
    let env: Record<string, string>;
    if (serverUrl) {
      const scratch = await scratchPostgres(serverUrl);
      cleanup.push(() => scratch.drop());
      database = scratch.database;
      env = { DATABASE_URL: scratch.url };
    } else {
      const dataDir = await embeddedDataDir();
      database = await openDatabase({ url: null, dataDir });
      env = { DATA_DIR: dataDir };
    }
    // The account, its endpoint and a finished run (its delivery queued), written by a process that sends nothing.
    const setup = await build({ WORKER_CONCURRENCY: '0', PROVIDER_BASE_URL_OPENAI: fake.baseUrl }, { database });
    const user = await createUser(setup.app, undefined, 'manage');
    await setup.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
    await setup.app.inject({ method: 'PUT', url: `/v1/${user.username}/minimal`, headers: user.headers, payload: { config: minimalLadder } });
    const { secret } = (await setup.app.inject({ method: 'POST', url: '/v1/webhooks', headers: user.headers, payload: { url: receiver.url } })).json<{ secret: string }>();
    const run = await setup.app.inject({ method: 'POST', url: `/v1/${user.username}/minimal/chat/completions`, headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'crash' }] } });
    expect(run.statusCode).toBe(200);
    await setup.close();
    // The embedded database has one process at a time.
    if (!serverUrl) await database.close();

    const first = await spawnServer({ ...env, ...SERVER_ENV });
    servers.push(first);
    await waitFor(() => receiver.received.length === 1, 30_000, 'the first attempt');
    // Long enough for the attempt to be recorded, well before the retry is due (about 5 s later).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await first.kill();
    expect(receiver.received).toHaveLength(1);

    const second = await spawnServer({ ...env, ...SERVER_ENV });
    servers.push(second);
    await waitFor(() => receiver.received.length === 2, 40_000, 'the retry after the restart');
    const [a, b] = receiver.received;
    expect(b!.headers['webhook-id']).toBe(a!.headers['webhook-id']);
    expect(b!.body).toBe(a!.body);
    expect(new StandardWebhook(secret).verify(b!.body, b!.headers)).toMatchObject({ type: 'instance.completed', data: { status: 'completed' } });
    await second.stop();
    expect(receiver.received).toHaveLength(2);

    const after = serverUrl ? database : await openDatabase({ url: null, dataDir: env.DATA_DIR! });
    try {
      const rows = await after.query<{ status: string; codes: number[] }>(
        `select d.status, array_agg(a.status_code order by a.attempt) as codes from webhook_deliveries d join webhook_attempts a on a.delivery_id = d.id group by d.id`,
      );
      expect(rows).toEqual([{ status: 'delivered', codes: [500, 200] }]);
    } finally {
      if (!serverUrl) await after.close();
    }
  }, 120_000);
});
