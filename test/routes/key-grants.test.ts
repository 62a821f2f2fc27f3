// Issue 23: a key cannot widen its own scope, reach ladders its own access list hides, or
// outlive its own expiry through the keys it creates or changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, createAccount, createKey, type TestApp } from '../helpers/build.js';
import { accessWithin } from '../../src/services/key-grants.js';
import type { LadderAccess } from '../../src/services/ladder-access.js';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('what a key may grant', () => {
  let t: TestApp;
  let username: string;
  beforeAll(async () => {
    t = await build();
    username = (await createAccount(t.app, 'granter')).username;
  });
  afterAll(() => t.close());

  const call = (method: 'POST' | 'PATCH' | 'GET', url: string, key: string, payload?: object) =>
    t.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });

  it('a whitelisted manage key cannot make an unrestricted key, nor widen a key to other ladders', async () => {
    const restricted = await createKey(t.app, username, { mode: 'whitelist', ladders: ['granter/a', 'granter/b'] }, { scope: 'manage' });
    const wide = await call('POST', '/v1/api-keys', restricted.key, {});
    expect(wide.statusCode).toBe(403);
    expect(wide.json()).toEqual({
      error: { message: 'A key cannot grant access to ladders its own access list does not allow.', type: 'permission_error', code: 'cannot_widen_access', param: 'access' },
    });
    // Within its own list: fine.
    const narrow = await call('POST', '/v1/api-keys', restricted.key, { access: { mode: 'whitelist', ladders: ['granter/a'] } });
    expect(narrow.statusCode).toBe(201);
    // Widening that key, or itself, later: refused, and nothing changed.
    for (const id of [narrow.json().id, restricted.id]) {
      const patch = await call('PATCH', `/v1/api-keys/${id}`, restricted.key, { access: { mode: 'whitelist', ladders: ['granter/*'] } });
      expect(patch.json().error.code).toBe('cannot_widen_access');
    }
    expect((await call('GET', `/v1/api-keys/${restricted.id}`, restricted.key)).json().access).toEqual({ mode: 'whitelist', ladders: ['granter/a', 'granter/b'] });
    // Renaming is not widening.
    expect((await call('PATCH', `/v1/api-keys/${restricted.id}`, restricted.key, { name: 'renamed' })).statusCode).toBe(200);
  });

  it('an expiring manage key cannot make a key that lives longer, or forever, nor extend itself', async () => {
    const expires = new Date(Date.now() + 3_600_000);
    const temporary = await createKey(t.app, username, undefined, { scope: 'manage', expires_at: expires.toISOString() });
    const message = `This key expires at ${expires.toISOString()}; the keys it creates or changes must expire no later.`;
    const forever = await call('POST', '/v1/api-keys', temporary.key, {});
    expect(forever.statusCode).toBe(403);
    expect(forever.json()).toEqual({ error: { message, type: 'permission_error', code: 'cannot_outlive_creator', param: 'expires_at' } });
    const later = await call('POST', '/v1/api-keys', temporary.key, { expires_at: new Date(expires.getTime() + 1000).toISOString() });
    expect(later.json().error.code).toBe('cannot_outlive_creator');
    const extend = await call('PATCH', `/v1/api-keys/${temporary.id}`, temporary.key, { expires_at: null });
    expect(extend.json().error.code).toBe('cannot_outlive_creator');
    const sooner = await call('POST', '/v1/api-keys', temporary.key, { expires_at: new Date(expires.getTime() - 1000).toISOString() });
    expect(sooner.statusCode).toBe(201);
  });

  it('scope: a use key never reaches the routes that could raise it, so its scope cannot be widened', async () => {
    const use = await createKey(t.app, username);
    const raise = await call('PATCH', `/v1/api-keys/${use.id}`, use.key, { scope: 'manage' });
    expect(raise.statusCode).toBe(403);
    expect(raise.json().error.code).toBe('insufficient_scope');
    expect((await call('GET', '/v1/account', use.key)).json().key.scope).toBe('use');
  });

  it('access containment, case by case', () => {
    const U: LadderAccess = { mode: 'unrestricted', ladders: [] };
    const W = (...ladders: string[]): LadderAccess => ({ mode: 'whitelist', ladders });
    const B = (...ladders: string[]): LadderAccess => ({ mode: 'blacklist', ladders });
    const cases: Array<[LadderAccess, LadderAccess, boolean]> = [
      [U, U, true], [W('a/x'), U, true], [B('a/x'), U, true],
      [U, W('a/x'), false], [W('a/x'), W('a/x', 'a/y'), true], [W('a/z'), W('a/x'), false], [W('a/x'), W('a/*'), true], [W('a/*'), W('a/x'), false],
      [B('a/x'), W('a/x'), false],
      [U, B('a/x'), false], [W('b/y'), B('a/x'), true], [W('a/x'), B('a/x'), false], [W('a/x'), B('a/*'), false], [W('a/*'), B('a/x'), false],
      [B('a/x', 'b/y'), B('a/x'), true], [B('b/y'), B('a/x'), false], [B('a/*'), B('a/x'), true], [B('a/x'), B('a/*'), false],
    ];
    for (const [inner, outer, expected] of cases) expect({ inner, outer, within: accessWithin(inner, outer) }).toEqual({ inner, outer, within: expected });
  });
});
