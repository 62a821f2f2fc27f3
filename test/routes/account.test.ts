// GET /v1/account: whose key this is (the web UI signs in with it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, build, createUser, type TestApp } from '../helpers/build.js';

describe('GET /v1/account', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });
  afterAll(() => t.close());

  it('answers the key\'s account and the key\'s ladder access', async () => {
    const user = await createUser(t.app, 'whoami-user');
    const res = await t.app.inject({ method: 'GET', url: '/v1/account', headers: user.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: user.id, username: 'whoami-user', api_key: { id: user.keyId, access: { mode: 'unrestricted', ladders: [] } } });
  });

  it('needs a key, and "account" is a reserved username', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/v1/account' })).json().error.code).toBe('missing_api_key');
    const reserved = await t.app.inject({ method: 'POST', url: '/v1/admin/accounts', headers: adminHeaders, payload: { username: 'account' } });
    expect(reserved.statusCode).toBe(400);
    expect(reserved.json().error).toMatchObject({ code: 'reserved_username', param: 'username' });
  });
});
