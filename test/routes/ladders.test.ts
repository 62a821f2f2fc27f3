// Ladder authoring and metadata: PUT, GET, DELETE /v1/{author}/{ladder} and GET /v1/{author}
// (issue 4 items 3 and 4; docs/ladders-api.md).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { build, createKey, createUser, type TestApp } from '../helpers/build.js';
import { gatedTreeOfThought, minimalLadder } from '../ladders/examples.js';

type Headers = Record<string, string>;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('ladder authoring', () => {
  let testApp: TestApp;
  let app: FastifyInstance;
  let owner: Awaited<ReturnType<typeof createUser>>;
  let other: Awaited<ReturnType<typeof createUser>>;

  const put = (headers: Headers, path: string, payload: unknown) =>
    app.inject({ method: 'PUT', url: `/v1/${path}`, headers, payload: payload as object });
  const get = (headers: Headers, path: string) => app.inject({ method: 'GET', url: `/v1/${path}`, headers });
  const del = (headers: Headers, path: string) => app.inject({ method: 'DELETE', url: `/v1/${path}`, headers });

  beforeAll(async () => {
    testApp = await build();
    app = testApp.app;
  });
  afterAll(() => testApp.close());
  beforeEach(async () => {
    owner = await createUser(app);
    other = await createUser(app);
  });

  it('creates version 1 with 201 and answers the metadata with the config', async () => {
    const res = await put(owner.headers, `${owner.username}/draft-refine`, { config: minimalLadder });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual([
      'allowed_targets', 'author', 'config', 'config_visibility', 'created_at', 'description', 'id', 'name', 'slug',
      'updated_at', 'usage_visibility', 'version',
    ]);
    expect(body).toMatchObject({
      author: owner.username,
      slug: 'draft-refine',
      name: 'Draft and refine',
      description: 'Writes a first answer, then improves it.',
      version: 1,
      usage_visibility: 'private',
      config_visibility: 'private',
      config: minimalLadder,
      allowed_targets: { strategy: 'universal' },
    });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.created_at).toMatch(ISO_UTC);
    expect(body.updated_at).toBe(body.created_at);
  });

  it('saves a new version with 200, keeping earlier versions readable', async () => {
    const first = (await put(owner.headers, `${owner.username}/l`, { config: minimalLadder, description: 'mine', usage_visibility: 'public' })).json();
    const { description: _dropped, ...withoutDescription } = minimalLadder;
    const changed = { ...withoutDescription, name: 'Draft and refine, v2' };
    const res = await put(owner.headers, `${owner.username}/l`, { config: changed });
    expect(res.statusCode).toBe(200);
    const second = res.json();
    // Same ladder, next version; omitted description and visibilities keep their saved values.
    expect(second).toMatchObject({ id: first.id, version: 2, name: 'Draft and refine, v2', description: 'mine', usage_visibility: 'public', created_at: first.created_at });
    expect(Date.parse(second.updated_at)).toBeGreaterThanOrEqual(Date.parse(first.updated_at));
    expect((await get(owner.headers, `${owner.username}/l`)).json()).toMatchObject({ version: 2, config: changed });

    const versions = await testApp.database.query<{ version: number; config: { name: string } }>(
      'select version, config from ladder_versions where ladder_id = $1 order by version',
      [first.id],
    );
    expect(versions.map((v) => [v.version, v.config.name])).toEqual([[1, 'Draft and refine'], [2, 'Draft and refine, v2']]);
    // Earlier versions stay readable over the API, as they were saved.
    const v1 = await get(owner.headers, `${owner.username}/l?version=1`);
    expect(v1.statusCode).toBe(200);
    expect(v1.json()).toMatchObject({ id: first.id, version: 1, name: 'Draft and refine', config: minimalLadder, updated_at: first.updated_at });
    const missing = await get(owner.headers, `${owner.username}/l?version=9`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toEqual({
      message: `Ladder "${owner.username}/l" has no version 9; its current version is 2.`,
      type: 'invalid_request_error',
      code: 'ladder_version_not_found',
      param: null,
    });
    expect((await get(owner.headers, `${owner.username}/l?version=0`)).json().error).toMatchObject({ code: 'invalid_value', param: 'version' });
    // A config with a description of its own sets it when the body has none.
    const third = (await put(owner.headers, `${owner.username}/l`, { config: minimalLadder })).json();
    expect(third).toMatchObject({ version: 3, description: 'Writes a first answer, then improves it.' });
  });

  it('refuses an invalid config with 400 invalid_ladder_config listing every error, and stores nothing', async () => {
    const res = await put(owner.headers, `${owner.username}/bad`, {
      config: { ...minimalLadder, exit: 'nowhere', executionBudget: { maxSpend: 60 } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: {
        message: 'The ladder config is invalid: exit: no step has id "nowhere"; executionBudget.maxSpend: 60 is above the platform maximum of 50 (USD)',
        type: 'invalid_request_error',
        code: 'invalid_ladder_config',
        param: 'config',
      },
    });
    expect(await testApp.database.query('select 1 from ladders where slug = $1', ['bad'])).toEqual([]);
  });

  it('keeps the current version when a new save is invalid', async () => {
    await put(owner.headers, `${owner.username}/keep`, { config: minimalLadder });
    expect((await put(owner.headers, `${owner.username}/keep`, { config: { name: 'x' } })).statusCode).toBe(400);
    expect((await get(owner.headers, `${owner.username}/keep`)).json().version).toBe(1);
  });

  it('is 400 missing_required_field without config, and unknown_parameter for a stray member', async () => {
    const missing = await put(owner.headers, `${owner.username}/x`, { description: 'd' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toMatchObject({ code: 'missing_required_field', param: 'config' });
    const stray = await put(owner.headers, `${owner.username}/x`, { config: minimalLadder, visibility: 'public' });
    expect(stray.json().error).toMatchObject({ code: 'unknown_parameter', param: 'visibility' });
  });

  it('refuses a config_visibility wider than usage_visibility', async () => {
    const res = await put(owner.headers, `${owner.username}/v`, { config: minimalLadder, usage_visibility: 'unlisted', config_visibility: 'public' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({
      message: 'config_visibility "public" cannot be wider than usage_visibility "unlisted".',
      type: 'invalid_request_error',
      code: 'invalid_visibility',
      param: 'config_visibility',
    });
    expect(await testApp.database.query('select 1 from ladders where slug = $1', ['v'])).toEqual([]);
    // On an update, the saved usage_visibility is what the new config_visibility is compared with.
    await put(owner.headers, `${owner.username}/v`, { config: minimalLadder, usage_visibility: 'public' });
    expect((await put(owner.headers, `${owner.username}/v`, { config: minimalLadder, config_visibility: 'public' })).statusCode).toBe(200);
  });

  it('enforces slug rules on save', async () => {
    for (const slug of ['Upper', '-dash', 'a.b', 'x'.repeat(65)]) {
      const res = await put(owner.headers, `${owner.username}/${slug}`, { config: minimalLadder });
      expect(res.statusCode, slug).toBe(400);
      expect(res.json().error).toEqual({
        message: `Invalid ladder slug "${slug}": use 1 to 64 lowercase letters, digits, "-" and "_", starting with a letter or digit.`,
        type: 'invalid_request_error',
        code: 'invalid_slug',
        param: 'ladder',
      });
    }
    for (const slug of ['a', '0_x-y', 'x'.repeat(64)]) {
      expect((await put(owner.headers, `${owner.username}/${slug}`, { config: minimalLadder })).statusCode, slug).toBe(201);
    }
  });

  it("refuses to save under another author's name with 403 not_ladder_owner, whether or not the ladder exists", async () => {
    await put(owner.headers, `${owner.username}/taken`, { config: minimalLadder, usage_visibility: 'public' });
    const existing = await put(other.headers, `${owner.username}/taken`, { config: gatedTreeOfThought });
    const missing = await put(other.headers, `${owner.username}/new-one`, { config: gatedTreeOfThought });
    for (const res of [existing, missing]) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({
        error: {
          message: `Only "${owner.username}" can save or delete ladders under /v1/${owner.username}/.`,
          type: 'permission_error',
          code: 'not_ladder_owner',
          param: null,
        },
      });
    }
    expect((await get(owner.headers, `${owner.username}/taken`)).json()).toMatchObject({ version: 1, config: minimalLadder });
  });

  it('deletes a ladder for its owner only', async () => {
    await put(owner.headers, `${owner.username}/gone`, { config: minimalLadder, usage_visibility: 'public' });
    const refused = await del(other.headers, `${owner.username}/gone`);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('not_ladder_owner');

    const res = await del(owner.headers, `${owner.username}/gone`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect((await get(owner.headers, `${owner.username}/gone`)).json().error.code).toBe('ladder_not_found');
    const again = await del(owner.headers, `${owner.username}/gone`);
    expect(again.statusCode).toBe(404);
    expect(again.json().error).toMatchObject({ code: 'ladder_not_found', message: `Ladder "${owner.username}/gone" was not found.` });
    // Saving again starts over at version 1.
    expect((await put(owner.headers, `${owner.username}/gone`, { config: minimalLadder })).json().version).toBe(1);
  });

  it('lists public ladders to others and every ladder to the author, without configs', async () => {
    await put(owner.headers, `${owner.username}/b-public`, { config: minimalLadder, usage_visibility: 'public', config_visibility: 'public' });
    await put(owner.headers, `${owner.username}/a-unlisted`, { config: minimalLadder, usage_visibility: 'unlisted' });
    await put(owner.headers, `${owner.username}/c-private`, { config: minimalLadder });

    const mine = await get(owner.headers, owner.username);
    expect(mine.statusCode).toBe(200);
    expect(mine.json().data.map((l: { slug: string }) => l.slug)).toEqual(['a-unlisted', 'b-public', 'c-private']);
    const theirs = await get(other.headers, owner.username);
    expect(theirs.json().data.map((l: { slug: string }) => l.slug)).toEqual(['b-public']);
    for (const entry of [...mine.json().data, ...theirs.json().data]) {
      expect(entry).not.toHaveProperty('config');
      expect(entry).not.toHaveProperty('allowed_targets');
    }
    expect((await get(other.headers, 'nobody-here')).json()).toEqual({ data: [] });
  });

  it("leaves ladders the key may not access out of the author's list", async () => {
    await put(owner.headers, `${owner.username}/one`, { config: minimalLadder, usage_visibility: 'public' });
    await put(owner.headers, `${owner.username}/two`, { config: minimalLadder, usage_visibility: 'public' });
    const key = await createKey(app, other.username, { mode: 'blacklist', ladders: [`${owner.username}/one`] });
    const res = await get({ authorization: `Bearer ${key.key}` }, owner.username);
    expect(res.json().data.map((l: { slug: string }) => l.slug)).toEqual(['two']);
  });
});
