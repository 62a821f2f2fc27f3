// The admin routes `ladder-admin` uses while a server holds the embedded database: accounts
// (list, delete), an account's ladders, runs, provider connections, and resealing keys.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInstanceService } from '../../src/services/instances.js';
import { adminHeaders, build, createUser, type TestApp } from '../helpers/build.js';
import { minimalLadder } from '../ladders/examples.js';

describe('admin API for the command line', () => {
  let t: TestApp;
  beforeAll(async () => {
    // No background worker: the runs listed here must stay as written (a worker claimed the pending one on a busy machine).
    t = await build({ ALLOW_PRIVATE_ENDPOINTS: 'false', WORKER_CONCURRENCY: '0' });
  });
  afterAll(() => t.close());

  const admin = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url: `/v1/admin${url}`, headers: adminHeaders, ...(payload ? { payload } : {}) });

  it('lists accounts and deletes one with its keys, which stop working at once', async () => {
    const user = await createUser(t.app, 'doomed-user');
    expect((await t.app.inject({ method: 'GET', url: '/v1/providers', headers: user.headers })).statusCode).toBe(200);
    expect((await admin('GET', '/accounts')).json().data).toContainEqual({ id: user.id, username: 'doomed-user', created_at: expect.any(String), disabled: false, disabled_at: null, key_count: 1 });
    expect((await admin('DELETE', '/accounts/doomed-user')).json()).toEqual({ ok: true });
    expect((await t.app.inject({ method: 'GET', url: '/v1/providers', headers: user.headers })).statusCode).toBe(401);
    expect((await admin('GET', '/accounts')).json().data.map((a: { username: string }) => a.username)).not.toContain('doomed-user');
    const again = await admin('DELETE', '/accounts/doomed-user');
    expect(again.statusCode).toBe(404);
    expect(again.json().error.code).toBe('account_not_found');
  });

  it('saves, lists, shows and deletes an account\'s ladders as their owner (private ones included)', async () => {
    await createUser(t.app, 'ladder-owner');
    const created = await admin('PUT', '/accounts/ladder-owner/ladders/draft', { config: minimalLadder });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ author: 'ladder-owner', slug: 'draft', version: 1, usage_visibility: 'private' });
    const second = await admin('PUT', '/accounts/ladder-owner/ladders/draft', { config: { ...minimalLadder, name: 'Second' }, usage_visibility: 'public' });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ version: 2, name: 'Second', usage_visibility: 'public' });
    expect((await admin('GET', '/accounts/ladder-owner/ladders')).json().data.map((l: { slug: string; version: number }) => [l.slug, l.version])).toEqual([['draft', 2]]);
    expect((await admin('GET', '/accounts/ladder-owner/ladders/draft?version=1')).json()).toMatchObject({ version: 1, name: minimalLadder.name, config: { exit: 'refine' } });

    const invalid = await admin('PUT', '/accounts/ladder-owner/ladders/draft', { config: { ...minimalLadder, exit: 'nowhere' } });
    expect(invalid.json()).toEqual({
      error: { message: 'The ladder config is invalid: exit: no step has id "nowhere"', type: 'invalid_request_error', code: 'invalid_ladder_config', param: 'config' },
    });
    const badSlug = await admin('PUT', '/accounts/ladder-owner/ladders/Bad%20Slug', { config: minimalLadder });
    expect(badSlug.statusCode).toBe(400);
    expect(badSlug.json().error.code).toBe('invalid_slug');
    expect((await admin('GET', '/accounts/nobody-here/ladders')).json().error.code).toBe('account_not_found');

    expect((await admin('DELETE', '/accounts/ladder-owner/ladders/draft')).json()).toEqual({ ok: true });
    const gone = await admin('GET', '/accounts/ladder-owner/ladders/draft');
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error.code).toBe('ladder_not_found');
  });

  it('lists runs with filters, newest first, and shows one', async () => {
    const user = await createUser(t.app, 'run-maker');
    const ladder = (await admin('PUT', '/accounts/run-maker/ladders/runs', { config: minimalLadder })).json();
    const instances = createInstanceService(t.database.db);
    const base = { ladderId: ladder.id, ladderVersion: 1, author: 'run-maker', slug: 'runs', accountId: user.id, apiKeyId: null, model: 'gpt-4o-mini', input: 'Hi', knobs: {} };
    const first = await instances.create({ ...base, mode: 'sync' });
    const second = (await instances.createPending({ ...base, knobs: { depth: 2 }, idempotency: null })).instance;

    const listed = await admin('GET', '/instances?account=run-maker');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data.map((r: { id: string }) => r.id)).toEqual([second.id, first.id]);
    expect(listed.json().data[1]).toEqual({
      id: first.id, status: 'running', ladder: 'run-maker/runs@v1', model: 'gpt-4o-mini', mode: 'sync', created_at: first.createdAt.toISOString(),
      started_at: expect.any(String), finished_at: null, spend_usd: 0, model_calls: 0,
    });
    expect((await admin('GET', '/instances?status=pending&ladder=run-maker/runs')).json().data.map((r: { id: string }) => r.id)).toEqual([second.id]);
    const one = await admin('GET', '/instances?account=run-maker&limit=1');
    expect(one.json()).toEqual({ data: [expect.objectContaining({ id: second.id })] });
    expect((await admin('GET', '/instances?status=sleeping')).statusCode).toBe(400);

    expect((await admin('GET', `/instances/${second.id}`)).json()).toMatchObject({ id: second.id, status: 'pending', knobs: { depth: 2 }, usage: null, answer: null, error: null });
    const unknown = await admin('GET', '/instances/00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('instance_not_found');
    expect((await admin('GET', '/instances/nope')).json().error).toMatchObject({ code: 'invalid_value', param: 'id' });
  });

  it('sets, lists and deletes connections with the API\'s endpoint rule, and reseals keys', async () => {
    await createUser(t.app, 'conn-owner');
    const refused = await admin('PUT', '/accounts/conn-owner/providers/custom', { api_key: 'local', endpoint: 'http://169.254.169.254' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'endpoint_not_allowed', message: expect.stringContaining('ALLOW_PRIVATE_ENDPOINTS=true') });

    const created = await admin('PUT', '/accounts/conn-owner/providers/openai', { api_key: 'sk-admin-set-0123456789', label: 'work' });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ provider: 'openai', label: 'work', key_prefix: 'sk-ad', created: true });
    const updated = await admin('PUT', '/accounts/conn-owner/providers/openai', { api_key: 'sk-admin-set-9876543210', priority: 7 });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ priority: 7, label: 'work', created: false });
    const listed = await admin('GET', '/accounts/conn-owner/providers');
    expect(listed.json().data).toEqual([expect.objectContaining({ provider: 'openai', priority: 7 })]);
    expect(listed.body).not.toContain('set-9876543210');

    expect((await admin('POST', '/reencrypt')).json()).toEqual({ reencrypted: 0, total: expect.any(Number) });
    expect((await admin('DELETE', '/accounts/conn-owner/providers/openai')).json()).toEqual({ ok: true });
    expect((await admin('DELETE', '/accounts/conn-owner/providers/openai')).json().error.code).toBe('provider_connection_not_found');
  });

  it('needs the admin token on every one of these routes', async () => {
    for (const [method, url] of [['GET', '/accounts'], ['DELETE', '/accounts/x-user'], ['GET', '/instances'], ['POST', '/reencrypt'], ['GET', '/accounts/x-user/ladders']] as const) {
      const res = await t.app.inject({ method, url: `/v1/admin${url}` });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
    }
  });
});
