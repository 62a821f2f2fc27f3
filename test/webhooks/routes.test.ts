// /v1/webhooks: create, list, get, update, delete, rotate, with exact bodies; the secret shown
// only on create and rotate, and sealed at rest; SSRF refusals at save; 404 for another
// account's endpoint; 405 for a wrong method; `webhooks` reserved as a username.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, build, createUser, type TestApp } from '../helpers/build.js';

const notFound = (id: string) => ({ error: { message: `Webhook endpoint "${id}" was not found.`, type: 'invalid_request_error', code: 'webhook_not_found', param: null } });

describe('/v1/webhooks', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    // As in production: private endpoints refused.
    t = await build({ ALLOW_PRIVATE_ENDPOINTS: 'false', WORKER_CONCURRENCY: '0' });
    user = await createUser(t.app, undefined, 'manage');
  });
  afterAll(async () => t?.close());

  const post = (payload: unknown, headers = user.headers) => t.app.inject({ method: 'POST', url: '/v1/webhooks', headers, payload: payload as object });

  it('create answers 201 with the endpoint and its secret, once; list and get never show it', async () => {
    const res = await post({ url: 'https://93.184.215.14/hooks?token=abc', events: ['instance.failed'], description: 'billing' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(res.headers.location).toBe(`/v1/webhooks/${body.id}`);
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'webhook_endpoint',
      url: 'https://93.184.215.14/hooks?token=abc',
      description: 'billing',
      events: ['instance.failed'],
      enabled: true,
      disabled_at: null,
      disabled_reason: null,
      failing_since: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const { secret, ...view } = body;
    const got = await t.app.inject({ method: 'GET', url: `/v1/webhooks/${body.id}`, headers: user.headers });
    expect(got.json()).toEqual(view);
    const list = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: user.headers });
    expect(list.json()).toEqual({ object: 'list', data: [view] });
    // Sealed at rest: the stored column is not the secret, nor contains it.
    const [row] = await t.database.query<{ secret_ciphertext: string }>('select secret_ciphertext from webhook_endpoints where id = $1', [body.id]);
    expect(row!.secret_ciphertext).not.toContain(secret.slice(6));
    expect(list.body).not.toContain(secret);
  });

  it('events default to all three; description to empty', async () => {
    const res = await post({ url: 'https://93.184.215.14/all' });
    expect(res.json()).toMatchObject({ events: ['instance.completed', 'instance.failed', 'instance.cancelled'], description: '' });
  });

  it('refuses at save: loopback, private and metadata addresses, plain http, credentials, fragments, unknown events', async () => {
    const refused = (host: string) => ({
      error: { message: `url host ${host} is a loopback, private, link-local or metadata address, which is not allowed.`, type: 'invalid_request_error', code: 'webhook_url_not_allowed', param: 'url' },
    });
    expect((await post({ url: 'https://127.0.0.1/x' })).json()).toEqual(refused('127.0.0.1'));
    expect((await post({ url: 'https://10.1.2.3/x' })).json()).toEqual(refused('10.1.2.3'));
    expect((await post({ url: 'https://169.254.169.254/latest' })).json()).toEqual(refused('169.254.169.254'));
    expect((await post({ url: 'https://[::1]:8443/x' })).json()).toEqual(refused('::1'));
    expect((await post({ url: 'https://localhost/x' })).json()).toEqual(refused('localhost'));
    const bad = async (payload: unknown, code: string, message: string) => {
      const res = await post(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code, message });
    };
    await bad({ url: 'http://93.184.215.14/x' }, 'webhook_url_not_allowed', 'url must use https.');
    await bad({ url: 'https://u:p@93.184.215.14/x' }, 'invalid_webhook_url', 'url must not contain credentials; check the webhook-signature header instead.');
    await bad({ url: 'https://93.184.215.14/x#frag' }, 'invalid_webhook_url', 'url must not contain a fragment.');
    await bad({ url: 'ftp://93.184.215.14/x' }, 'invalid_webhook_url', 'url must be an absolute https URL.');
    expect((await post({ url: 'https://93.184.215.14/x', events: ['instance.started'] })).statusCode).toBe(400);
    expect((await post({ url: 'https://93.184.215.14/x', events: [] })).statusCode).toBe(400);
    expect((await post({ url: 'https://93.184.215.14/x', secret: 'mine' })).statusCode).toBe(400);
    expect((await post({})).json().error).toMatchObject({ param: 'url' });
    // Nothing was saved by any of them.
    const [row] = await t.database.query<{ n: number }>(`select count(*)::int as n from webhook_endpoints where url like '%/x%'`);
    expect(row!.n).toBe(0);
  });

  it('PATCH changes only what it is given, checks a new url, and disables or enables', async () => {
    const { id } = (await post({ url: 'https://93.184.215.14/p', description: 'before' })).json();
    const patch = (payload: unknown) => t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${id}`, headers: user.headers, payload: payload as object });
    expect((await patch({ description: 'after' })).json()).toMatchObject({ description: 'after', url: 'https://93.184.215.14/p', events: ['instance.completed', 'instance.failed', 'instance.cancelled'] });
    expect((await patch({ url: 'https://192.168.0.1/' })).json().error.code).toBe('webhook_url_not_allowed');
    const disabled = (await patch({ enabled: false })).json();
    expect(disabled).toMatchObject({ enabled: false, disabled_at: expect.any(String), disabled_reason: 'Disabled through the API (PATCH with "enabled": false).' });
    expect((await patch({ enabled: true })).json()).toMatchObject({ enabled: true, disabled_at: null, disabled_reason: null });
    expect((await patch({})).statusCode).toBe(400);
  });

  it('rotate answers a new secret; delete removes the endpoint', async () => {
    const created = (await post({ url: 'https://93.184.215.14/r' })).json();
    const rotated = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${created.id}/rotate-secret`, headers: user.headers });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().secret).toMatch(/^whsec_/);
    expect(rotated.json().secret).not.toBe(created.secret);
    const del = await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${created.id}`, headers: user.headers });
    expect(del.json()).toEqual({ ok: true });
    const again = await t.app.inject({ method: 'GET', url: `/v1/webhooks/${created.id}`, headers: user.headers });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual(notFound(created.id));
  });

  it("another account's, an unknown and a malformed id are the same 404 on every route", async () => {
    const { id } = (await post({ url: 'https://93.184.215.14/o' })).json();
    const other = await createUser(t.app, undefined, 'manage');
    for (const target of [id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      for (const [method, suffix] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/test'], ['POST', '/rotate-secret'], ['GET', '/deliveries']] as const) {
        const res = await t.app.inject({ method, url: `/v1/webhooks/${target}${suffix}`, headers: other.headers, ...(method === 'PATCH' ? { payload: { description: 'x' } } : {}) });
        expect(res.statusCode, `${method} ${suffix}`).toBe(404);
        expect(res.json()).toEqual(notFound(target));
      }
    }
    // Untouched by all that.
    expect((await t.app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers: user.headers })).statusCode).toBe(200);
  });

  it('a wrong method is 405 with Allow; no key is 401', async () => {
    const put = await t.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: user.headers, payload: {} });
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe('POST, GET');
    const putOne = await t.app.inject({ method: 'PUT', url: '/v1/webhooks/00000000-0000-4000-8000-000000000000', headers: user.headers, payload: {} });
    expect(putOne.statusCode).toBe(405);
    expect(putOne.headers.allow).toBe('GET, PATCH, DELETE');
    expect((await t.app.inject({ method: 'GET', url: '/v1/webhooks' })).statusCode).toBe(401);
  });

  it('deliveries: a bad limit or cursor is 400', async () => {
    const { id } = (await post({ url: 'https://93.184.215.14/d' })).json();
    const get = (q: string) => t.app.inject({ method: 'GET', url: `/v1/webhooks/${id}/deliveries${q}`, headers: user.headers });
    expect((await get('')).json()).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
    expect((await get('?limit=0')).json().error.code).toBe('invalid_value');
    expect((await get('?after=00000000-0000-4000-8000-000000000000')).json().error.code).toBe('invalid_cursor');
  });

  it('`webhooks` cannot be a username', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/admin/accounts', headers: adminHeaders, payload: { username: 'webhooks' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'reserved_username', message: 'username "webhooks" is reserved.' });
  });
});
