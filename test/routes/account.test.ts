// GET /v1/account: whose key this is (the web UI signs in with it and reads `username`).
// Its limits and usage are covered by test/routes/api-keys.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, build, createUser, type TestApp } from '../helpers/build.js';

describe('GET /v1/account', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });
  afterAll(() => t.close());

  it('answers the key\'s account and the calling key with its ladder access', async () => {
    const user = await createUser(t.app, 'whoami-user');
    const res = await t.app.inject({ method: 'GET', url: '/v1/account', headers: user.headers });
    expect(res.statusCode).toBe(200);
    const none = { requests_per_minute: null, tokens_per_minute: null, usd_per_day: null, usd_per_month: null };
    expect(res.json()).toEqual({
      id: user.id,
      username: 'whoami-user',
      created_at: expect.any(String),
      limits: { account: none, key: none },
      this_month: { start: expect.stringMatching(/^\d{4}-\d{2}-01T00:00:00\.000Z$/), requests: 0, total_tokens: 0, cost_usd: 0 },
      key: {
        id: user.keyId, key_prefix: expect.any(String), name: null, scope: 'use',
        access: { mode: 'unrestricted', ladders: [] }, expires_at: null, created_at: expect.any(String),
      },
    });
    expect(user.key.startsWith(res.json().key.key_prefix)).toBe(true);
  });

  it('needs a key, and "account" is a reserved username', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/v1/account' })).json().error.code).toBe('missing_api_key');
    const reserved = await t.app.inject({ method: 'POST', url: '/v1/admin/accounts', headers: adminHeaders, payload: { username: 'account' } });
    expect(reserved.statusCode).toBe(400);
    expect(reserved.json().error).toMatchObject({ code: 'reserved_username', param: 'username' });
  });
});
