import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mayAccessLadder } from '../../src/services/ladder-access.js';
import { adminHeaders, build, createUser, type TestApp } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

describe('API key authentication', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await build();
    ({ key } = await createUser(t.app));
  });
  afterAll(() => t.close());

  const get = (authorization?: string) =>
    t.app.inject({ method: 'GET', url: '/v1/providers', headers: authorization === undefined ? {} : { authorization } });

  it('accepts a valid key', async () => {
    const res = await get(`Bearer ${key}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [] });
  });

  it.each([
    ['missing', undefined, 'missing_api_key', 'Missing API key. Send it in the header `Authorization: Bearer <API key>`.'],
    ['not Bearer', 'Basic dXNlcjpwYXNz', 'invalid_authorization_header', 'Malformed Authorization header. Expected `Authorization: Bearer <API key>`.'],
    ['empty bearer', 'Bearer ', 'invalid_authorization_header', 'Malformed Authorization header. Expected `Authorization: Bearer <API key>`.'],
    ['foreign format', 'Bearer sk-proj-1234567890', 'invalid_api_key', 'Invalid API key.'],
    ['unknown key', 'Bearer ldr_live_AAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'invalid_api_key', 'Invalid API key.'],
  ])('rejects a %s key with 401', async (_name, header, code, message) => {
    const res = await get(header);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: { message, type: 'authentication_error', code, param: null } });
  });

  it('rejects a key whose prefix is right but secret is wrong', async () => {
    const forged = `${key.slice(0, -4)}${key.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const res = await get(`Bearer ${forged}`);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('invalid_api_key');
    expect(res.body).not.toContain(forged);
  });

  it('protects every non-public route, but not the catalog, health and docs', async () => {
    for (const [method, url] of [['GET', '/v1/providers'], ['POST', '/v1/providers'], ['POST', '/v1/chat/completions'], ['DELETE', '/v1/providers/openai']] as const) {
      expect((await t.app.inject({ method, url })).statusCode, `${method} ${url}`).toBe(401);
    }
    for (const url of ['/v1/providers/catalog', '/healthz', '/readyz', '/v1/openapi.json', '/docs/']) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    }
  });
});

describe('ladder access control', () => {
  it.each([
    [{ mode: 'unrestricted' as const, ladders: [] }, true, true],
    [{ mode: 'whitelist' as const, ladders: ['ann/a'] }, true, false],
    [{ mode: 'whitelist' as const, ladders: ['ann/*'] }, true, true],
    [{ mode: 'blacklist' as const, ladders: ['ann/a'] }, false, true],
    [{ mode: 'blacklist' as const, ladders: ['ann/*'] }, false, false],
  ])('%j: ann/a %s, ann/b %s', (access, seesA, seesB) => {
    expect(mayAccessLadder(access, 'ann', 'a')).toBe(seesA);
    expect(mayAccessLadder(access, 'ann', 'b')).toBe(seesB);
    expect(mayAccessLadder(access, 'bob', 'a')).toBe(access.mode !== 'whitelist');
  });
});

describe('revocation across nodes sharing one database', () => {
  it('stops a revoked key at once on the revoking node, and on another node within KEY_CACHE_TTL_MS', async () => {
    const database = await openTestDatabase();
    const nodeA = await build({}, { database });
    const nodeB = await build({ KEY_CACHE_TTL_MS: '300' }, { database });
    try {
      const user = await createUser(nodeA.app);
      const onB = () => nodeB.app.inject({ method: 'GET', url: '/v1/providers', headers: user.headers });
      expect((await onB()).statusCode).toBe(200);

      const revoke = await nodeA.app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${user.keyId}`, headers: adminHeaders });
      expect(revoke.statusCode).toBe(200);
      expect((await nodeA.app.inject({ method: 'GET', url: '/v1/providers', headers: user.headers })).statusCode).toBe(401);

      await new Promise((resolve) => setTimeout(resolve, 350));
      const late = await onB();
      expect(late.statusCode).toBe(401);
      expect(late.json().error.code).toBe('revoked_api_key');
    } finally {
      await nodeA.close();
      await nodeB.close();
      await database.close();
    }
  });
});
