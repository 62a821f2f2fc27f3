import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, build, createAccount, createKey, type TestApp } from '../helpers/build.js';

describe('admin API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });
  afterAll(() => t.close());

  const post = (url: string, payload: unknown, headers: Record<string, string> = adminHeaders) =>
    t.app.inject({ method: 'POST', url, headers, payload: payload as object });

  it('creates an account: 201 with id, username and created_at', async () => {
    const res = await post('/v1/admin/accounts', { username: 'carol' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['created_at', 'id', 'username']);
    expect(body.username).toBe('carol');
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
  });

  it('answers 409 when the username is taken', async () => {
    await createAccount(t.app, 'dave');
    const res = await post('/v1/admin/accounts', { username: 'dave' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      error: { message: 'username "dave" is already taken.', type: 'invalid_request_error', code: 'username_taken', param: 'username' },
    });
  });

  it.each(['ab', 'Upper', '-lead', 'trail-', 'has_underscore', 'x'.repeat(40)])('enforces username rules: %j is 400', async (username) => {
    const res = await post('/v1/admin/accounts', { username });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value', param: 'username' });
  });

  it('refuses usernames that would shadow fixed API paths', async () => {
    const res = await post('/v1/admin/accounts', { username: 'providers' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({ message: 'username "providers" is reserved.', type: 'invalid_request_error', code: 'reserved_username', param: 'username' });
  });

  it('rejects a missing or wrong admin token with 401', async () => {
    for (const headers of [{}, { authorization: "Bearer wrong-token-wrong-token" }, { authorization: "Basic abc" }] as Record<string, string>[]) {
      const res = await post('/v1/admin/accounts', { username: 'erin' }, headers);
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toMatchObject({ type: 'authentication_error', code: 'invalid_admin_token' });
    }
  });

  it('does not accept an API key as the admin token', async () => {
    await createAccount(t.app, 'frank');
    const { key } = await createKey(t.app, 'frank');
    const res = await post('/v1/admin/accounts', { username: 'frank2' }, { authorization: `Bearer ${key}` });
    expect(res.statusCode).toBe(401);
  });

  it('creates an API key, shows the key once, and stores only its hash', async () => {
    await createAccount(t.app, 'grace');
    const res = await post('/v1/admin/accounts/grace/api-keys', {
      name: 'ci',
      access: { mode: 'whitelist', ladders: ['grace/summarise', 'heidi/*'] },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['access', 'created_at', 'expires_at', 'id', 'key', 'key_prefix', 'name', 'scope']);
    expect(body).toMatchObject({ scope: 'use', expires_at: null });
    expect(body.key).toMatch(/^ldr_live_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    expect(body.key.startsWith(body.key_prefix)).toBe(true);
    expect(body.access).toEqual({ mode: 'whitelist', ladders: ['grace/summarise', 'heidi/*'] });

    const rows = await t.database.query<Record<string, unknown>>('select row_to_json(k)::text as row from api_keys k');
    const dump = rows.map((r) => String(r.row)).join('\n');
    expect(dump).toContain(body.key_prefix);
    expect(dump).not.toContain(body.key);
    expect(dump).not.toContain(body.key.slice(body.key_prefix.length + 1));
    expect(dump).toContain('"access_mode":"whitelist"');
    expect(dump).toMatch(/"access_ladders":\["grace\/summarise", ?"heidi\/\*"\]/);

    const list = await t.app.inject({ method: 'GET', url: '/v1/admin/accounts/grace/api-keys', headers: adminHeaders });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      data: [{
        id: body.id, key_prefix: body.key_prefix, name: 'ci', scope: 'use', access: body.access, expires_at: null, created_at: body.created_at, revoked_at: null,
        limits: { requests_per_minute: null, tokens_per_minute: null, usd_per_day: null, usd_per_month: null },
      }],
    });
    expect(list.body).not.toContain(body.key);
  });

  it.each([
    [{ access: { mode: 'unrestricted', ladders: ['a/b'] } }, 'access.ladders must be empty when access.mode is "unrestricted".', 'access.ladders'],
    [{ access: { mode: 'whitelist', ladders: ['no-slash'] } }, 'access.ladders[0] must have the form "author/slug" or "author/*", got "no-slash".', 'access.ladders[0]'],
  ])('validates key access control %j', async (payload, message, param) => {
    await createAccount(t.app, 'ivan').catch(() => undefined);
    const res = await post('/v1/admin/accounts/ivan/api-keys', payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({ message, type: 'invalid_request_error', code: 'invalid_access', param });
  });

  it('rejects an unknown access mode and unknown fields', async () => {
    await createAccount(t.app, 'judy');
    const mode = await post('/v1/admin/accounts/judy/api-keys', { access: { mode: 'greylist', ladders: [] } });
    expect(mode.statusCode).toBe(400);
    expect(mode.json().error).toMatchObject({ code: 'invalid_value', param: 'access.mode' });
    const extra = await post('/v1/admin/accounts/judy/api-keys', { nmae: 'typo' });
    expect(extra.json().error).toEqual({
      message: 'Unrecognized request argument supplied: nmae.', type: 'invalid_request_error', code: 'unknown_parameter', param: 'nmae',
    });
  });

  it('answers 404 for keys of an unknown account', async () => {
    const res = await post('/v1/admin/accounts/nobody/api-keys', {});
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toEqual({ message: 'No account has username "nobody".', type: 'invalid_request_error', code: 'account_not_found', param: null });
  });

  it('revokes a key: it stops working at once, the list shows revoked_at, revoking again is ok', async () => {
    await createAccount(t.app, 'mallory');
    const { id, key } = await createKey(t.app, 'mallory');
    const authed = { authorization: `Bearer ${key}` };
    expect((await t.app.inject({ method: 'GET', url: '/v1/providers', headers: authed })).statusCode).toBe(200);

    const del = await t.app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${id}`, headers: adminHeaders });
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ ok: true });

    const after = await t.app.inject({ method: 'GET', url: '/v1/providers', headers: authed });
    expect(after.statusCode).toBe(401);
    expect(after.json().error).toEqual({ message: 'This API key has been revoked.', type: 'authentication_error', code: 'revoked_api_key', param: null });

    const list = await t.app.inject({ method: 'GET', url: '/v1/admin/accounts/mallory/api-keys', headers: adminHeaders });
    expect(list.json().data[0].revoked_at).not.toBeNull();
    const again = await t.app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${id}`, headers: adminHeaders });
    expect(again.json()).toEqual({ ok: true });
  });

  it('answers 404 when revoking an unknown key and 400 for a malformed id', async () => {
    const unknown = await t.app.inject({ method: 'DELETE', url: '/v1/admin/api-keys/00000000-0000-4000-8000-000000000000', headers: adminHeaders });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('api_key_not_found');
    const malformed = await t.app.inject({ method: 'DELETE', url: '/v1/admin/api-keys/not-a-uuid', headers: adminHeaders });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error).toMatchObject({ code: 'invalid_value', param: 'id' });
  });
});

describe('admin API without ADMIN_TOKEN', () => {
  it('does not exist: every admin route answers 404', async () => {
    const t = await build({ ADMIN_TOKEN: '' });
    try {
      const res = await t.app.inject({ method: 'POST', url: '/v1/admin/accounts', headers: adminHeaders, payload: { username: 'zed' } });
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toEqual({ message: 'Unknown request URL: POST /v1/admin/accounts.', type: 'invalid_request_error', code: 'unknown_route', param: null });
    } finally {
      await t.close();
    }
  });
});
