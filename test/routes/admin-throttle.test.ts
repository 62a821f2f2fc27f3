// Failed admin authentications are throttled per client address (ADMIN_AUTH_MAX_FAILURES_PER_MINUTE).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthThrottle } from '../../src/services/auth-throttle.js';
import { adminHeaders, build, type TestApp } from '../helpers/build.js';

const wrong = { authorization: 'Bearer wrong-token-wrong-token' };

describe('admin authentication throttle', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build({ ADMIN_AUTH_MAX_FAILURES_PER_MINUTE: '3' });
  });
  afterAll(() => t.close());

  const createAccount = (username: string, headers: Record<string, string>, remoteAddress: string) =>
    t.app.inject({ method: 'POST', url: '/v1/admin/accounts', headers, payload: { username }, remoteAddress });

  it('answers 429 after the limit, refuses even the right token from that address, and leaves other addresses alone', async () => {
    for (const headers of [wrong, {}, { authorization: 'Basic abc' }]) {
      const res = await createAccount('zoe', headers, '203.0.113.7');
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('invalid_admin_token');
    }
    for (const headers of [wrong, adminHeaders]) {
      const res = await createAccount('zoe', headers, '203.0.113.7');
      expect(res.statusCode).toBe(429);
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(res.json()).toEqual({
        error: {
          message: `Too many failed admin authentication attempts from this address; retry in ${retryAfter} s.`,
          type: 'rate_limit_error',
          code: 'too_many_failed_attempts',
          param: null,
        },
      });
    }
    expect(await t.database.query('select 1 from accounts where username = $1', ['zoe'])).toEqual([]);

    const elsewhere = await createAccount('zoe', adminHeaders, '198.51.100.1');
    expect(elsewhere.statusCode).toBe(201);
  });

  it('does not count API-key routes or correct tokens', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/v1/admin/accounts/nobody/api-keys', headers: adminHeaders, remoteAddress: '198.51.100.2' });
      expect(res.statusCode).toBe(404);
    }
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/v1/providers', headers: wrong, remoteAddress: '198.51.100.2' });
      expect(res.statusCode).toBe(401);
    }
    const res = await createAccount('yves', adminHeaders, '198.51.100.2');
    expect(res.statusCode).toBe(201);
  });
});

describe('createAuthThrottle', () => {
  it('forgets failures older than a minute (sliding window)', () => {
    let now = 1_000_000;
    const throttle = createAuthThrottle(2, () => now);
    throttle.fail('a');
    now += 30_000;
    throttle.fail('a');
    expect(throttle.blockedFor('a')).toBe(30_000);
    now += 30_000;
    expect(throttle.blockedFor('a')).toBe(0);
    throttle.fail('a');
    expect(throttle.blockedFor('a')).toBe(30_000);
  });

  it('keeps a bounded table, dropping the stalest address first', () => {
    const now = 0;
    const throttle = createAuthThrottle(1, () => now, 100);
    for (let i = 0; i < 1000; i++) throttle.fail(`10.0.${i >> 8}.${i & 255}`);
    expect(throttle.size).toBe(100);
    expect(throttle.blockedFor('10.0.3.231')).toBe(60_000);
    expect(throttle.blockedFor('10.0.0.0')).toBe(0);
  });

  it('is off at 0', () => {
    const throttle = createAuthThrottle(0);
    for (let i = 0; i < 100; i++) throttle.fail('a');
    expect(throttle.blockedFor('a')).toBe(0);
    expect(throttle.size).toBe(0);
  });
});
