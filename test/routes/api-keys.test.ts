// Issue 23, part 1: keys with a scope; an account's `manage` keys manage its keys and webhooks
// through /v1/api-keys; `use` keys get 403 insufficient_scope there, never 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, build, createAccount, createKey, type TestApp } from '../helpers/build.js';

const INSUFFICIENT_SCOPE = {
  error: {
    message: 'This API key has the `use` scope; managing the account (its keys, webhooks and settings) needs a key with the `manage` scope.',
    type: 'permission_error',
    code: 'insufficient_scope',
    param: null,
  },
};
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const NO_LIMITS = { requests_per_minute: null, tokens_per_minute: null, usd_per_day: null, usd_per_month: null };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('/v1/api-keys and /v1/account', () => {
  let t: TestApp;
  let username: string;
  let manage: { id: string; key: string; key_prefix: string };
  let use: { id: string; key: string; key_prefix: string };
  beforeAll(async () => {
    t = await build();
    username = (await createAccount(t.app, 'keyholder')).username;
    manage = await createKey(t.app, username, undefined, { scope: 'manage', name: 'admin key' });
    use = await createKey(t.app, username);
  });
  afterAll(() => t.close());

  const call = (method: string, url: string, key: string, payload?: object) =>
    t.app.inject({ method: method as 'GET', url, headers: bearer(key), ...(payload ? { payload } : {}) });

  it('keys the operator created without a scope are `use`; the admin API creates `manage` keys too', async () => {
    const listed = await t.app.inject({ method: 'GET', url: `/v1/admin/accounts/${username}/api-keys`, headers: adminHeaders });
    expect(listed.json().data.map((k: { id: string; scope: string }) => [k.id, k.scope])).toEqual([[manage.id, 'manage'], [use.id, 'use']]);
  });

  it('a `use` key gets 403 insufficient_scope on every management route, even for ids that do not exist', async () => {
    const routes: Array<[string, string, object?]> = [
      ['GET', '/v1/api-keys'],
      ['POST', '/v1/api-keys', { name: 'x' }],
      ['GET', `/v1/api-keys/${manage.id}`],
      ['GET', `/v1/api-keys/${UNKNOWN_ID}`],
      ['GET', '/v1/api-keys/not-a-uuid'],
      ['PATCH', `/v1/api-keys/${use.id}`, { scope: 'manage' }],
      ['DELETE', `/v1/api-keys/${manage.id}`],
      ['GET', '/v1/webhooks'],
      ['POST', '/v1/webhooks', { url: 'https://example.com/hook' }],
      ['GET', `/v1/webhooks/${UNKNOWN_ID}`],
      ['PATCH', `/v1/webhooks/${UNKNOWN_ID}`, { enabled: false }],
      ['DELETE', `/v1/webhooks/${UNKNOWN_ID}`],
      ['POST', `/v1/webhooks/${UNKNOWN_ID}/rotate-secret`],
      ['GET', `/v1/webhooks/${UNKNOWN_ID}/deliveries`],
      ['POST', `/v1/webhooks/${UNKNOWN_ID}/test`],
    ];
    for (const [method, url, body] of routes) {
      const res = await call(method, url, use.key, body);
      expect({ method, url, status: res.statusCode, body: res.json() }).toEqual({ method, url, status: 403, body: INSUFFICIENT_SCOPE });
    }
    // Nothing changed: the `use` key is still `use`, and no key was made.
    const keys = (await call('GET', '/v1/api-keys', manage.key)).json().data;
    expect(keys.map((k: { scope: string }) => k.scope)).toEqual(['manage', 'use']);
  });

  it('a `use` key still reads its own account, and learns its scope there', async () => {
    const res = await call('GET', '/v1/account', use.key);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      id: expect.any(String),
      username,
      created_at: expect.any(String),
      limits: { account: NO_LIMITS, key: NO_LIMITS },
      this_month: { start: expect.stringMatching(/^\d{4}-\d{2}-01T00:00:00\.000Z$/), requests: 0, total_tokens: 0, cost_usd: 0 },
      key: { id: use.id, key_prefix: use.key_prefix, name: null, scope: 'use', access: { mode: 'unrestricted', ladders: [] }, expires_at: null, created_at: expect.any(String) },
    });
  });

  it('GET /v1/account shows the limits the operator set and this month’s usage', async () => {
    await t.app.inject({ method: 'PUT', url: `/v1/admin/accounts/${username}/limits`, headers: adminHeaders, payload: { usd_per_month: 25 } });
    await t.app.inject({ method: 'PUT', url: `/v1/admin/api-keys/${manage.id}/limits`, headers: adminHeaders, payload: { requests_per_minute: 30 } });
    const [account] = await t.database.query<{ id: string }>('select id from accounts where username = $1', [username]);
    await t.database.query(
      `insert into usage_records (created_at, account_id, api_key_id, model, prompt_tokens, completion_tokens, total_tokens, cost_nanos, outcome)
       values (now(), $1, $2, 'gpt-4o-mini', 10, 5, 15, 250000000, 'ok'), (now() - interval '40 days', $1, $2, 'gpt-4o-mini', 1, 1, 2, 9000000000, 'ok')`,
      [account!.id, manage.id],
    );
    const body = (await call('GET', '/v1/account', manage.key)).json();
    expect(body.limits).toEqual({ account: { ...NO_LIMITS, usd_per_month: 25 }, key: { ...NO_LIMITS, requests_per_minute: 30 } });
    // The 40-day-old call is last month's (or older): only this month counts.
    expect(body.this_month).toMatchObject({ requests: 1, total_tokens: 15, cost_usd: 0.25 });
    expect(body.key).toMatchObject({ id: manage.id, scope: 'manage', name: 'admin key' });
  });

  it('creates a key: 201, the secret once, with scope, access and expiry; never the secret again', async () => {
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const res = await call('POST', '/v1/api-keys', manage.key, {
      name: 'deploys', scope: 'use', access: { mode: 'whitelist', ladders: ['keyholder/summarise', 'keyholder/summarise'] }, expires_at: expires,
    });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key_prefix: expect.stringMatching(/^ldr_live_[A-Za-z0-9]{8}$/),
      name: 'deploys',
      scope: 'use',
      access: { mode: 'whitelist', ladders: ['keyholder/summarise'] },
      expires_at: expires,
      created_at: expect.any(String),
      key: expect.stringMatching(/^ldr_live_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{43}$/),
    });
    expect(res.headers.location).toBe(`/v1/api-keys/${created.id}`);
    const { key, ...view } = created;
    // It works.
    expect((await call('GET', '/v1/models', key)).statusCode).toBe(200);
    // The secret is nowhere after this: not in the key, the list, the audit log, nor the database.
    const one = await call('GET', `/v1/api-keys/${created.id}`, manage.key);
    expect(one.json()).toEqual({ ...view, revoked_at: null, limits: NO_LIMITS });
    const list = await call('GET', '/v1/api-keys', manage.key);
    expect(list.body).not.toContain(key.slice(18));
    expect(list.json().data.at(-1)).toEqual({ ...view, revoked_at: null, limits: NO_LIMITS });
    const audit = await t.app.inject({ method: 'GET', url: '/v1/admin/audit?account=keyholder&limit=100', headers: adminHeaders });
    expect(audit.body).not.toContain(key.slice(18));
    const rows = await t.database.query<Record<string, unknown>>('select * from api_keys where id = $1', [created.id]);
    expect(JSON.stringify(rows)).not.toContain(key.slice(18));
    expect(rows[0]).toMatchObject({ created_by_key_id: manage.id });
  });

  it('a new key is `use` and unrestricted unless told; a `manage` key may make another `manage` key', async () => {
    const plain = (await call('POST', '/v1/api-keys', manage.key, {})).json();
    expect(plain).toMatchObject({ name: null, scope: 'use', access: { mode: 'unrestricted', ladders: [] }, expires_at: null });
    const second = await call('POST', '/v1/api-keys', manage.key, { scope: 'manage' });
    expect(second.statusCode).toBe(201);
    expect((await call('GET', '/v1/api-keys', second.json().key)).statusCode).toBe(200);
  });

  it('refuses bad bodies with 400 and a precise error', async () => {
    const cases: Array<[object, object]> = [
      [{ scope: 'owner' }, { code: 'invalid_value', param: 'scope' }],
      [{ expires_at: 'tomorrow' }, { code: 'invalid_expires_at', param: 'expires_at', message: 'expires_at must be an ISO 8601 date-time with a time zone, got "tomorrow".' }],
      [{ expires_at: '2001-01-01T00:00:00Z' }, { code: 'invalid_expires_at', param: 'expires_at', message: 'expires_at must lie in the future.' }],
      [{ access: { mode: 'whitelist', ladders: ['nope'] } }, { code: 'invalid_access', param: 'access.ladders[0]' }],
      [{ secret: 'x' }, { param: 'secret' }],
    ];
    for (const [body, error] of cases) {
      const res = await call('POST', '/v1/api-keys', manage.key, body);
      expect({ body, status: res.statusCode }).toEqual({ body, status: 400 });
      expect(res.json().error).toMatchObject({ type: 'invalid_request_error', ...error });
    }
  });

  it('PATCH changes only what it is given, and takes effect at once', async () => {
    const target = (await call('POST', '/v1/api-keys', manage.key, { name: 'before' })).json();
    const renamed = await call('PATCH', `/v1/api-keys/${target.id}`, manage.key, { name: 'after' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ id: target.id, name: 'after', scope: 'use', access: { mode: 'unrestricted', ladders: [] } });
    // Narrowed to one ladder: another ladder's metadata is now 404 for it.
    await call('PUT', '/v1/keyholder/other', manage.key, { config: (await import('../ladders/examples.js')).minimalLadder });
    expect((await call('GET', '/v1/keyholder/other', target.key)).statusCode).toBe(200);
    const narrowed = await call('PATCH', `/v1/api-keys/${target.id}`, manage.key, { access: { mode: 'whitelist', ladders: ['keyholder/summarise'] } });
    expect(narrowed.json()).toMatchObject({ name: 'after', access: { mode: 'whitelist', ladders: ['keyholder/summarise'] } });
    expect((await call('GET', '/v1/keyholder/other', target.key)).statusCode).toBe(404);
    // Raised to `manage`: it may manage at once.
    expect((await call('GET', '/v1/api-keys', target.key)).statusCode).toBe(403);
    await call('PATCH', `/v1/api-keys/${target.id}`, manage.key, { scope: 'manage' });
    expect((await call('GET', '/v1/api-keys', target.key)).statusCode).toBe(200);
  });

  it('another account’s key, an unknown id and a malformed one are the same 404', async () => {
    const other = await createAccount(t.app);
    const foreign = await createKey(t.app, other.username);
    for (const id of [foreign.id, UNKNOWN_ID, 'not-a-uuid']) {
      for (const [method, body] of [['GET'], ['PATCH', { name: 'mine' }], ['DELETE']] as Array<[string, object?]>) {
        const res = await call(method, `/v1/api-keys/${id}`, manage.key, body);
        expect({ id, method, status: res.statusCode, body: res.json() }).toEqual({
          id, method, status: 404, body: { error: { message: `No API key has id "${id}".`, type: 'invalid_request_error', code: 'api_key_not_found', param: null } },
        });
      }
    }
    expect((await call('GET', '/v1/models', foreign.key)).statusCode).toBe(200);
  });

  it('DELETE revokes: 401 revoked_api_key at once; revoking again answers the same; a revoked key cannot be changed', async () => {
    const victim = (await call('POST', '/v1/api-keys', manage.key, { name: 'victim' })).json();
    expect((await call('GET', '/v1/models', victim.key)).statusCode).toBe(200);
    const res = await call('DELETE', `/v1/api-keys/${victim.id}`, manage.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: victim.id, revoked_at: expect.any(String) });
    const after = await call('GET', '/v1/models', victim.key);
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual({ error: { message: 'This API key has been revoked.', type: 'authentication_error', code: 'revoked_api_key', param: null } });
    expect((await call('DELETE', `/v1/api-keys/${victim.id}`, manage.key)).json().revoked_at).toBe(res.json().revoked_at);
    const patch = await call('PATCH', `/v1/api-keys/${victim.id}`, manage.key, { name: 'zombie' });
    expect(patch.statusCode).toBe(409);
    expect(patch.json()).toEqual({
      error: { message: `API key "${victim.id}" is revoked; a revoked key cannot be changed.`, type: 'invalid_request_error', code: 'api_key_revoked', param: null },
    });
  });

  it('a key may revoke itself', async () => {
    const self = (await call('POST', '/v1/api-keys', manage.key, { scope: 'manage' })).json();
    expect((await call('DELETE', `/v1/api-keys/${self.id}`, self.key)).statusCode).toBe(200);
    expect((await call('GET', '/v1/api-keys', self.key)).json().error.code).toBe('revoked_api_key');
  });

  it('an expired key is 401 expired_api_key, with the time it expired', async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    const short = (await call('POST', '/v1/api-keys', manage.key, { expires_at: soon })).json();
    expect((await call('GET', '/v1/models', short.key)).statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const res = await call('GET', '/v1/models', short.key);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: { message: `This API key expired at ${soon}.`, type: 'authentication_error', code: 'expired_api_key', param: null } });
  });

  it('answers 405 with Allow for a wrong method, and 404 for unknown paths under /v1/api-keys and /v1/account', async () => {
    const put = await call('PUT', '/v1/api-keys', manage.key, {});
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe('POST, GET');
    const putOne = await call('PUT', `/v1/api-keys/${use.id}`, manage.key, {});
    expect(putOne.statusCode).toBe(405);
    expect(putOne.headers.allow).toBe('GET, PATCH, DELETE');
    const post = await call('POST', '/v1/account', manage.key, {});
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET');
    for (const url of ['/v1/account/keys', `/v1/api-keys/${use.id}/rotate`]) {
      const res = await call('GET', url, manage.key);
      expect({ url, status: res.statusCode }).toEqual({ url, status: 404 });
    }
  });

  it('`account` and `api-keys` cannot be usernames', async () => {
    for (const name of ['account', 'api-keys']) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/admin/accounts', headers: adminHeaders, payload: { username: name } });
      expect(res.json()).toEqual({ error: { message: `username "${name}" is reserved.`, type: 'invalid_request_error', code: 'reserved_username', param: 'username' } });
    }
  });
});
