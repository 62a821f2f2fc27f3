// Issue 23: revoking, changing or disabling takes effect on every node within a second, not at
// the cache's TTL: two apps on one database, the second caching keys for an hour.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { adminHeaders, build, createAccount, createKey, type TestApp } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

/** Polls `check` every 20 ms for at most a second; answers how long it took. */
async function withinASecond(check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (let i = 0; i < 50; i++) {
    if (await check()) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('not seen within a second');
}

describe('key changes reach another node sharing the database at once', () => {
  let database: Database;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    database = await openTestDatabase();
    a = await build({}, { database });
    b = await build({ KEY_CACHE_TTL_MS: '3600000' }, { database });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await database.close();
  });

  const onB = (key: string, url = '/v1/models') => b.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });

  it('a key revoked through /v1/api-keys on A is refused by B within a second', async () => {
    await createAccount(a.app, 'notified');
    const manage = await createKey(a.app, 'notified', undefined, { scope: 'manage' });
    const victim = await createKey(a.app, 'notified');
    expect((await onB(victim.key)).statusCode).toBe(200); // B caches it for an hour
    const res = await a.app.inject({ method: 'DELETE', url: `/v1/api-keys/${victim.id}`, headers: { authorization: `Bearer ${manage.key}` } });
    expect(res.statusCode).toBe(200);
    await withinASecond(async () => (await onB(victim.key)).statusCode === 401);
    expect((await onB(victim.key)).json().error.code).toBe('revoked_api_key');
  });

  it('a key revoked by the operator, and a key whose scope was lowered, change on B within a second', async () => {
    const victim = await createKey(a.app, 'notified');
    expect((await onB(victim.key)).statusCode).toBe(200);
    await a.app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${victim.id}`, headers: adminHeaders });
    await withinASecond(async () => (await onB(victim.key)).statusCode === 401);

    const manager = await createKey(a.app, 'notified', undefined, { scope: 'manage' });
    expect((await onB(manager.key, '/v1/api-keys')).statusCode).toBe(200);
    const lowered = await a.app.inject({ method: 'PATCH', url: `/v1/api-keys/${manager.id}`, headers: { authorization: `Bearer ${manager.key}` }, payload: { scope: 'use' } });
    expect(lowered.json().scope).toBe('use');
    await withinASecond(async () => (await onB(manager.key, '/v1/api-keys')).statusCode === 403);
  });

  it('disabling on A: B answers account_disabled within a second; enabling: B lets the keys in again', async () => {
    await createAccount(a.app, 'switched');
    const key = await createKey(a.app, 'switched');
    expect((await onB(key.key)).statusCode).toBe(200);
    await a.app.inject({ method: 'POST', url: '/v1/admin/accounts/switched/disable', headers: adminHeaders });
    await withinASecond(async () => (await onB(key.key)).statusCode === 401);
    expect((await onB(key.key)).json().error.code).toBe('account_disabled');
    await a.app.inject({ method: 'POST', url: '/v1/admin/accounts/switched/enable', headers: adminHeaders });
    await withinASecond(async () => (await onB(key.key)).statusCode === 200);
  });
});
