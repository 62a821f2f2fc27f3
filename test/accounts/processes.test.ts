// Issue 23, part 4: two built servers, spawned, on one PostgreSQL database. Disabling the account
// (through a third process, the admin API of an in-test app) makes both answer its key 401
// account_disabled within a second; enabling lets it in again on both. PostgreSQL only: the
// embedded database has one process at a time (test/routes/key-notices.test.ts covers it in-process).
import { afterAll, describe, expect, it } from 'vitest';
import { adminHeaders, build, createAccount, createKey } from '../helpers/build.js';
import { getJson, scratchPostgres, spawnServer, type SpawnedServer } from '../helpers/spawned-server.js';

const serverUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!serverUrl)('disable and enable across processes', () => {
  const servers: SpawnedServer[] = [];
  const cleanup: Array<() => Promise<void>> = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()));
    for (const step of cleanup.reverse()) await step();
  });

  it('both servers refuse the disabled account’s key within a second, and accept it once enabled', async () => {
    const scratch = await scratchPostgres(serverUrl!);
    cleanup.push(() => scratch.drop());
    const admin = await build({}, { database: scratch.database });
    cleanup.push(() => admin.close());
    await createAccount(admin.app, 'spread');
    const { key } = await createKey(admin.app, 'spread');
    // An hour of key cache: only the notice can make them forget in time.
    for (let i = 0; i < 2; i++) {
      const server = await spawnServer({ DATABASE_URL: scratch.url, LOG_LEVEL: 'info', WORKER_CONCURRENCY: '0', KEY_CACHE_TTL_MS: '3600000' });
      servers.push(server);
      await server.url(); // listening, its certificate written
    }
    const headers = { authorization: `Bearer ${key}` };
    const statuses = () => Promise.all(servers.map((s) => getJson(s, '/v1/models', headers)));
    expect((await statuses()).map((r) => r.status)).toEqual([200, 200]);

    const until = async (wanted: number) => {
      const started = Date.now();
      for (let i = 0; i < 50 && (await statuses()).some((r) => r.status !== wanted); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      return Date.now() - started;
    };
    expect((await admin.app.inject({ method: 'POST', url: '/v1/admin/accounts/spread/disable', headers: adminHeaders })).statusCode).toBe(200);
    expect(await until(401)).toBeLessThan(1000);
    for (const res of await statuses()) expect(res.body.error.code).toBe('account_disabled');

    expect((await admin.app.inject({ method: 'POST', url: '/v1/admin/accounts/spread/enable', headers: adminHeaders })).statusCode).toBe(200);
    expect(await until(200)).toBeLessThan(1000);
    expect((await statuses()).map((r) => r.status)).toEqual([200, 200]);
  }, 60_000);
});
