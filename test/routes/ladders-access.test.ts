// Who may see and run a ladder: visibility, config exposure and per-key access control,
// with byte-identical 404s for every hidden case (issue 4 item 4; docs/ladders-api.md).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createKey, createUser, type TestApp } from '../helpers/build.js';
import { minimalLadder } from '../ladders/examples.js';

type Headers = Record<string, string>;
type User = Awaited<ReturnType<typeof createUser>>;

describe('ladder access', () => {
  let fake: FakeVendor;
  let testApp: TestApp;
  let app: FastifyInstance;
  let owner: User;
  let other: User;

  const put = (path: string, payload: object) =>
    app.inject({ method: 'PUT', url: `/v1/${owner.username}/${path}`, headers: owner.headers, payload });
  const get = (headers: Headers, path: string) => app.inject({ method: 'GET', url: `/v1/${path}`, headers });
  const run = (headers: Headers, path: string) =>
    app.inject({
      method: 'POST',
      url: `/v1/${path}/chat/completions`,
      headers,
      payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    });
  const keyHeaders = async (user: User, mode: 'whitelist' | 'blacklist', ladders: string[]) =>
    ({ authorization: `Bearer ${(await createKey(app, user.username, { mode, ladders })).key}` });

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    testApp = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl });
    app = testApp.app;
  });
  afterAll(async () => {
    await testApp.close();
    await fake.close();
  });
  beforeEach(async () => {
    fake.reset();
    owner = await createUser(app);
    other = await createUser(app);
    for (const user of [owner, other]) {
      const res = await app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
      expect(res.statusCode).toBe(201);
    }
  });

  const notFoundBody = (path: string) =>
    JSON.stringify({ error: { message: `Ladder "${path}" was not found.`, type: 'invalid_request_error', code: 'ladder_not_found', param: null } });

  it('shows the owner every ladder, with config and allowed_targets', async () => {
    await put('mine', { config: minimalLadder });
    const res = await get(owner.headers, `${owner.username}/mine`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ usage_visibility: 'private', config: minimalLadder, allowed_targets: { strategy: 'universal' } });
    expect((await run(owner.headers, `${owner.username}/mine`)).statusCode).toBe(200);
  });

  it.each([
    ['private', 'private', false, false],
    ['unlisted', 'private', true, false],
    ['unlisted', 'unlisted', true, false],
    ['public', 'private', true, false],
    ['public', 'unlisted', true, false],
    ['public', 'public', true, true],
  ] as const)('usage %s, config %s: others see it %s, its config %s', async (usage, configVisibility, visible, configShown) => {
    await put('l', { config: minimalLadder, usage_visibility: usage, config_visibility: configVisibility });
    const path = `${owner.username}/l`;
    const meta = await get(other.headers, path);
    const ran = await run(other.headers, path);
    if (!visible) {
      expect(meta.statusCode).toBe(404);
      expect(meta.body).toBe(notFoundBody(path));
      expect(ran.statusCode).toBe(404);
      expect(ran.body).toBe(notFoundBody(path));
      return;
    }
    expect(meta.statusCode).toBe(200);
    expect(meta.json()).toMatchObject({ author: owner.username, usage_visibility: usage, config_visibility: configVisibility });
    if (configShown) {
      expect(meta.json()).toMatchObject({ config: minimalLadder, allowed_targets: { strategy: 'universal' } });
    } else {
      expect(meta.json()).not.toHaveProperty('config');
      expect(meta.json()).not.toHaveProperty('allowed_targets');
    }
    expect(ran.statusCode).toBe(200);
  });

  it('answers missing, private and key-excluded ladders with byte-identical 404s', async () => {
    const path = `${owner.username}/secret`;
    const missingMeta = await get(other.headers, path);
    const missingRun = await run(other.headers, path);

    await put('secret', { config: minimalLadder });
    const privateMeta = await get(other.headers, path);
    const privateRun = await run(other.headers, path);

    await put('secret', { config: minimalLadder, usage_visibility: 'public', config_visibility: 'public' });
    const blacklisted = await keyHeaders(other, 'blacklist', [path]);
    const whitelisted = await keyHeaders(other, 'whitelist', [`${owner.username}/something-else`]);
    const ownBlacklisted = await keyHeaders(owner, 'blacklist', [`${owner.username}/*`]);
    const excluded = [
      await get(blacklisted, path), await run(blacklisted, path),
      await get(whitelisted, path), await run(whitelisted, path),
      await get(ownBlacklisted, path), await run(ownBlacklisted, path),
    ];

    const all = [missingMeta, missingRun, privateMeta, privateRun, ...excluded];
    for (const res of all) {
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe(notFoundBody(path));
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(notFoundBody(path))));
      expect(res.headers['x-ladder-instance']).toBeUndefined();
    }
    // Nothing ran for any of them.
    expect(fake.requests).toHaveLength(0);
    expect(await testApp.database.query('select 1 from instances where author = $1', [owner.username])).toEqual([]);
  });

  it('lets a whitelist key see exactly its listed ladders, and author/* all of them', async () => {
    await put('one', { config: minimalLadder, usage_visibility: 'public' });
    await put('two', { config: minimalLadder, usage_visibility: 'public' });
    const only = await keyHeaders(other, 'whitelist', [`${owner.username}/one`]);
    expect((await get(only, `${owner.username}/one`)).statusCode).toBe(200);
    expect((await get(only, `${owner.username}/two`)).body).toBe(notFoundBody(`${owner.username}/two`));
    const every = await keyHeaders(other, 'whitelist', [`${owner.username}/*`]);
    expect((await get(every, `${owner.username}/two`)).statusCode).toBe(200);
    // A whitelist does not widen visibility: a private ladder stays hidden.
    await put('three', { config: minimalLadder });
    expect((await get(every, `${owner.username}/three`)).body).toBe(notFoundBody(`${owner.username}/three`));
  });

  it('lets a blacklist key see everything but its listed ladders', async () => {
    await put('one', { config: minimalLadder, usage_visibility: 'unlisted' });
    await put('two', { config: minimalLadder, usage_visibility: 'unlisted' });
    const keyed = await keyHeaders(other, 'blacklist', [`${owner.username}/two`]);
    expect((await get(keyed, `${owner.username}/one`)).statusCode).toBe(200);
    expect((await run(keyed, `${owner.username}/one`)).statusCode).toBe(200);
    expect((await run(keyed, `${owner.username}/two`)).body).toBe(notFoundBody(`${owner.username}/two`));
  });

  it("refuses a key-excluded save or delete of the owner's own ladder with the same 404", async () => {
    await put('kept', { config: minimalLadder });
    const path = `${owner.username}/kept`;
    const keyed = await keyHeaders(owner, 'blacklist', [path]);
    const saved = await app.inject({ method: 'PUT', url: `/v1/${path}`, headers: keyed, payload: { config: minimalLadder } });
    const deleted = await app.inject({ method: 'DELETE', url: `/v1/${path}`, headers: keyed });
    for (const res of [saved, deleted]) expect(res.body).toBe(notFoundBody(path));
    expect((await get(owner.headers, path)).json().version).toBe(1);
  });

  it('answers a malformed author or slug in a read or run with the same 404', async () => {
    for (const path of [`${owner.username}/Not_Valid`, `${owner.username}/${'x'.repeat(65)}`, `X/slug`]) {
      for (const res of [await get(other.headers, path), await run(other.headers, path)]) {
        expect(res.statusCode, path).toBe(404);
        expect(res.body).toBe(notFoundBody(path));
      }
    }
  });

  it('keeps the fixed paths under /v1 working beside /v1/{author}/{ladder}', async () => {
    const providers = await get(owner.headers, 'providers');
    expect(providers.statusCode).toBe(200);
    expect(providers.json().data.map((c: { provider: string }) => c.provider)).toEqual(['openai']);
    expect((await app.inject({ method: 'GET', url: '/v1/providers/catalog' })).statusCode).toBe(200);
    const direct = await app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: owner.headers,
      payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'direct' }] },
    });
    expect(direct.statusCode).toBe(200);
    expect(direct.json()).toMatchObject({ model: 'gpt-4o-mini', choices: [{ message: { content: 'echo: direct' } }] });
    expect(direct.json().id).toMatch(/^ldr-chat-/);
    const validate = await app.inject({ method: 'POST', url: '/v1/validate', headers: owner.headers, payload: { config: minimalLadder } });
    expect(validate.json()).toEqual({ valid: true, errors: [], error_count: 0 });
    const patched = await app.inject({ method: 'PATCH', url: '/v1/providers/openai', headers: owner.headers, payload: { priority: 5 } });
    expect(patched.json()).toMatchObject({ provider: 'openai', priority: 5 });
    expect((await app.inject({ method: 'GET', url: '/v1/openapi.json' })).statusCode).toBe(200);
    // A fixed prefix with a method it lacks never falls through to the ladder routes: "providers" is a reserved username.
    const wrongMethod = await get(owner.headers, 'providers/openai');
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe('PATCH, DELETE');
  });

  it('requires an API key on every ladder route', async () => {
    await put('l', { config: minimalLadder, usage_visibility: 'public' });
    for (const [method, url] of [['GET', `/v1/${owner.username}`], ['GET', `/v1/${owner.username}/l`], ['PUT', `/v1/${owner.username}/l`], ['DELETE', `/v1/${owner.username}/l`], ['POST', `/v1/${owner.username}/l/chat/completions`]] as const) {
      const res = await app.inject({ method, url, payload: method === 'GET' || method === 'DELETE' ? undefined : {} });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(res.json().error.type).toBe('authentication_error');
    }
  });
});
