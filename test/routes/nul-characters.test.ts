// PostgreSQL cannot store the NUL character; a request carrying one is the caller's error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, createUser, type TestApp } from '../helpers/build.js';
import { minimalLadder } from '../ladders/examples.js';

const refused = {
  error: {
    message: 'Text in the request contains the NUL character (\\u0000), which cannot be stored.',
    type: 'invalid_request_error',
    code: 'invalid_characters',
    param: null,
  },
};

describe('text with a NUL character', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    t = await build();
    user = await createUser(t.app);
  });
  afterAll(() => t.close());
  const count = async (table: string) => Number((await t.database.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n);

  it('is refused with 400 in a provider connection, and nothing is stored', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: 'sk-test-0123456789', label: 'a\u0000b' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(refused);
    expect(await count('provider_connections')).toBe(0);
  });

  it('is refused with 400 in a ladder config, and nothing is stored', async () => {
    const res = await t.app.inject({ method: 'PUT', url: `/v1/${user.username}/nul`, headers: user.headers, payload: { config: { ...minimalLadder, name: 'a\u0000b' } } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(refused);
    expect(await count('ladders')).toBe(0);
    expect(await count('ladder_versions')).toBe(0);
  });

  it('is refused with 400 as a ladder run input, before any model call', async () => {
    expect((await t.app.inject({ method: 'PUT', url: `/v1/${user.username}/plain`, headers: user.headers, payload: { config: minimalLadder } })).statusCode).toBe(201);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/${user.username}/plain/chat/completions`,
      headers: user.headers,
      payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi\u0000there' }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(refused);
    expect(await count('instances')).toBe(0);
  });
});
