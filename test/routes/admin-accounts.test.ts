// Issue 23, part 4: the operator's account list, account detail, disable and enable, and the
// audit log of every administrative change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, build, createAccount, createKey, type TestApp } from '../helpers/build.js';

const NO_LIMITS = { requests_per_minute: null, tokens_per_minute: null, usd_per_day: null, usd_per_month: null };
const ACCOUNT_DISABLED = {
  error: { message: 'The account of this API key is disabled; ask the operator to enable it.', type: 'authentication_error', code: 'account_disabled', param: null },
};

describe('admin: accounts and the audit log', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });
  afterAll(() => t.close());

  const admin = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: adminHeaders, ...(payload ? { payload } : {}) });

  it('lists accounts by username in cursor pages, filtered by name', async () => {
    for (const name of ['list-c', 'list-a', 'list-e', 'list-b', 'list-d', 'other-x']) await createAccount(t.app, name);
    await createKey(t.app, 'list-a');
    const revoked = await createKey(t.app, 'list-a');
    await admin('DELETE', `/v1/admin/api-keys/${revoked.id}`);
    const seen: string[] = [];
    let url = '/v1/admin/accounts?name=list-&limit=2';
    for (let page = 0; page < 5; page++) {
      const res = await admin('GET', url);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      seen.push(...body.data.map((a: { username: string }) => a.username));
      if (!body.has_more) {
        expect(body.next_cursor).toBeNull();
        break;
      }
      url = `/v1/admin/accounts?name=list-&limit=2&after=${body.next_cursor}`;
    }
    expect(seen).toEqual(['list-a', 'list-b', 'list-c', 'list-d', 'list-e']);
    const first = (await admin('GET', '/v1/admin/accounts?name=list-a')).json();
    expect(first).toEqual({
      object: 'list',
      data: [{ id: expect.any(String), username: 'list-a', created_at: expect.any(String), disabled: false, disabled_at: null, key_count: 1 }],
      has_more: false,
      next_cursor: null,
    });
    // A LIKE wildcard in the filter is a plain character.
    expect((await admin('GET', '/v1/admin/accounts?name=%25')).json().data).toEqual([]);
    expect((await admin('GET', '/v1/admin/accounts?name=list_')).json().data).toEqual([]);
  });

  it('refuses a cursor it did not make and a bad limit with 400', async () => {
    for (const [query, param, code] of [['after=bm90IGEgdXNlcg', 'after', 'invalid_cursor'], ['after=%21', 'after', 'invalid_cursor'], ['limit=0', 'limit', 'invalid_value'], ['limit=101', 'limit', 'invalid_value']]) {
      const res = await admin('GET', `/v1/admin/accounts?${query}`);
      expect({ query, status: res.statusCode, param: res.json().error.param, code: res.json().error.code }).toEqual({ query, status: 400, param, code });
    }
  });

  it('shows an account: keys count, limits, this month’s usage, created_at, disabled', async () => {
    const account = await createAccount(t.app, 'detail-me');
    await createKey(t.app, 'detail-me');
    await createKey(t.app, 'detail-me', undefined, { expires_at: new Date(Date.now() + 60_000).toISOString() });
    await admin('PUT', '/v1/admin/accounts/detail-me/limits', { usd_per_day: 3 });
    await t.database.query(
      `insert into usage_records (created_at, account_id, model, prompt_tokens, completion_tokens, total_tokens, cost_nanos, outcome) values (now(), $1, 'm', 3, 4, 7, 500000000, 'ok')`,
      [account.id],
    );
    const res = await admin('GET', '/v1/admin/accounts/detail-me');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: account.id,
      username: 'detail-me',
      created_at: expect.any(String),
      disabled: false,
      disabled_at: null,
      key_count: 2,
      limits: { ...NO_LIMITS, usd_per_day: 3 },
      this_month: { start: expect.any(String), requests: 1, total_tokens: 7, cost_usd: 0.5 },
    });
    const missing = await admin('GET', '/v1/admin/accounts/nobody-here');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: { message: 'No account has username "nobody-here".', type: 'invalid_request_error', code: 'account_not_found', param: null } });
  });

  it('disable: every key answers 401 account_disabled at once; enable: they work again; each is idempotent', async () => {
    await createAccount(t.app, 'switchable');
    const keys = [await createKey(t.app, 'switchable'), await createKey(t.app, 'switchable', undefined, { scope: 'manage' })];
    const calls = () => Promise.all(keys.map((k) => t.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${k.key}` } })));
    expect((await calls()).map((r) => r.statusCode)).toEqual([200, 200]);

    const disabled = await admin('POST', '/v1/admin/accounts/switchable/disable');
    expect(disabled.statusCode).toBe(200);
    expect(disabled.json()).toEqual({
      id: expect.any(String), username: 'switchable', created_at: expect.any(String), disabled: true, disabled_at: expect.any(String), key_count: 2, runs_cancelled: 0,
    });
    for (const res of await calls()) expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: ACCOUNT_DISABLED });
    const again = await admin('POST', '/v1/admin/accounts/switchable/disable');
    expect(again.json().disabled_at).toBe(disabled.json().disabled_at);
    expect((await admin('GET', '/v1/admin/accounts?name=switchable')).json().data[0]).toMatchObject({ disabled: true });

    const enabled = await admin('POST', '/v1/admin/accounts/switchable/enable');
    expect(enabled.json()).toMatchObject({ disabled: false, disabled_at: null, runs_cancelled: 0 });
    expect((await calls()).map((r) => r.statusCode)).toEqual([200, 200]);
    expect((await admin('POST', '/v1/admin/accounts/switchable/enable')).statusCode).toBe(200);
    expect((await admin('POST', '/v1/admin/accounts/nobody-here/disable')).json().error.code).toBe('account_not_found');

    const audit = (await admin('GET', '/v1/admin/audit?account=switchable')).json();
    // Idempotent: the second disable and the second enable changed nothing and left no entry.
    expect(audit.data.map((e: { action: string }) => e.action)).toEqual(['account.enabled', 'account.disabled', 'api_key.created', 'api_key.created', 'account.created']);
  });

  it('audits every change with who made it, what and when, and never a secret', async () => {
    const start = new Date();
    const account = await createAccount(t.app, 'audited');
    const byAdmin = await createKey(t.app, 'audited', undefined, { scope: 'manage', name: 'boss' });
    await admin('PUT', '/v1/admin/accounts/audited/limits', { requests_per_minute: 10 });
    await admin('PUT', `/v1/admin/api-keys/${byAdmin.id}/limits`, { usd_per_day: 1 });
    const headers = { authorization: `Bearer ${byAdmin.key}` };
    const byKey = (await t.app.inject({ method: 'POST', url: '/v1/api-keys', headers, payload: { name: 'child' } })).json();
    await t.app.inject({ method: 'PATCH', url: `/v1/api-keys/${byKey.id}`, headers, payload: { name: 'renamed', scope: 'manage' } });
    await t.app.inject({ method: 'DELETE', url: `/v1/api-keys/${byKey.id}`, headers });
    const hook = (await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers, payload: { url: 'https://hooks.example.com/services/T0/B0/s3cr3t-token' } })).json();
    await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${hook.id}`, headers, payload: { description: 'ops' } });
    await t.app.inject({ method: 'POST', url: `/v1/webhooks/${hook.id}/rotate-secret`, headers });
    await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${hook.id}`, headers });
    await admin('POST', '/v1/admin/accounts/audited/disable');
    await admin('POST', '/v1/admin/accounts/audited/enable');
    await admin('DELETE', `/v1/admin/api-keys/${byAdmin.id}`);

    const res = await admin('GET', '/v1/admin/audit?account=audited&limit=100');
    expect(res.statusCode).toBe(200);
    const entries = res.json().data.reverse();
    const ADMIN = { type: 'admin', api_key_id: null };
    const KEY = { type: 'api_key', api_key_id: byAdmin.id };
    const prefix = (key: { key_prefix: string }) => key.key_prefix;
    expect(entries.map((e: any) => [e.action, e.actor, e.target_id])).toEqual([
      ['account.created', ADMIN, account.id],
      ['api_key.created', ADMIN, byAdmin.id],
      ['account.limits_set', ADMIN, account.id],
      ['api_key.limits_set', ADMIN, byAdmin.id],
      ['api_key.created', KEY, byKey.id],
      ['api_key.updated', KEY, byKey.id],
      ['api_key.revoked', KEY, byKey.id],
      ['webhook.created', KEY, hook.id],
      ['webhook.updated', KEY, hook.id],
      ['webhook.secret_rotated', KEY, hook.id],
      ['webhook.deleted', KEY, hook.id],
      ['account.disabled', ADMIN, account.id],
      ['account.enabled', ADMIN, account.id],
      ['api_key.revoked', ADMIN, byAdmin.id],
    ]);
    for (const entry of entries) {
      expect(entry.account).toEqual({ id: account.id, username: 'audited' });
      expect(new Date(entry.created_at).getTime()).toBeGreaterThanOrEqual(start.getTime() - 1000);
    }
    expect(entries[1].details).toEqual({ key_prefix: prefix(byAdmin), name: 'boss', scope: 'manage', access: { mode: 'unrestricted', ladders: [] }, expires_at: null });
    expect(entries[2].details).toEqual({ limits: { ...NO_LIMITS, requests_per_minute: 10 } });
    expect(entries[5].details).toMatchObject({ before: { name: 'child', scope: 'use' }, after: { name: 'renamed', scope: 'manage' } });
    expect(entries[7].details).toEqual({ host: 'hooks.example.com', events: ['instance.completed', 'instance.failed', 'instance.cancelled'] });
    expect(entries[8].details).toEqual({ description: 'ops' });
    // Never a key, a hash, a webhook secret, or a URL's path (it may carry a token).
    for (const secret of [byAdmin.key, byKey.key, hook.secret, 's3cr3t-token']) expect(res.body).not.toContain(secret);
    const hashes = await t.database.query<{ key_hash: string }>('select key_hash from api_keys where account_id = $1', [account.id]);
    for (const { key_hash } of hashes) expect(res.body).not.toContain(key_hash);
  });

  it('pages the audit log newest first and filters by action', async () => {
    const seen: string[] = [];
    let url = '/v1/admin/audit?action=account.created&limit=3';
    for (let page = 0; page < 20; page++) {
      const body = (await admin('GET', url)).json();
      expect(body.data.length).toBeLessThanOrEqual(3);
      seen.push(...body.data.map((e: { id: string }) => e.id));
      if (!body.has_more) break;
      url = `/v1/admin/audit?action=account.created&limit=3&after=${body.next_cursor}`;
    }
    const all = await t.database.query<{ id: string }>(`select id::text as id from audit_log where action = 'account.created' order by audit_log.id desc`);
    expect(seen).toEqual(all.map((r) => r.id));
    expect(seen.length).toBeGreaterThan(6);
    expect((await admin('GET', '/v1/admin/audit?after=xyz')).json().error.code).toBe('invalid_cursor');
    expect((await admin('GET', '/v1/admin/audit?action=nonsense')).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: '/v1/admin/audit' })).statusCode).toBe(401);
  });

  it('the retention job deletes audit entries older than AUDIT_RETENTION_DAYS', async () => {
    await t.database.query(`update audit_log set created_at = now() - interval '400 days' where username = 'list-e'`);
    const before = await t.database.query<{ n: number }>(`select count(*)::int as n from audit_log`);
    const result = await t.app.runRetention();
    expect(result.auditRowsDeleted).toBe(1);
    expect(await t.database.query(`select 1 from audit_log where username = 'list-e'`)).toEqual([]);
    expect((await t.database.query<{ n: number }>(`select count(*)::int as n from audit_log`))[0]!.n).toBe(before[0]!.n - 1);
  });
});
