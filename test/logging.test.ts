import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyPrefix } from '../src/crypto/api-keys.js';
import { adminHeaders, ADMIN_TOKEN, build, createUser, LogCapture, type TestApp } from './helpers/build.js';

describe('logs', () => {
  const logs = new LogCapture();
  let t: TestApp;
  beforeAll(async () => {
    t = await build({}, { logs });
  });
  afterAll(() => t.close());

  it('write one JSON line per request with request id, method, path, status and duration', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz?probe=1', headers: { 'x-request-id': 'req-log-1' } });
    const line = logs.lines.map((l) => JSON.parse(l)).find((l) => l.request_id === 'req-log-1' && l.msg === 'request completed');
    expect(res.statusCode).toBe(200);
    expect(line).toMatchObject({ level: 30, method: 'GET', path: '/healthz', status: 200 });
    expect(typeof line.duration_ms).toBe('number');
  });

  it('never contain API keys, the admin token or provider keys', async () => {
    const user = await createUser(t.app);
    const providerKey = 'sk-test-provider-secret-0123456789';
    await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: providerKey } });
    await t.app.inject({ method: 'GET', url: '/v1/providers', headers: user.headers });
    // A failing request too: errors are logged with more detail.
    await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'nope', api_key: providerKey } });
    await t.app.inject({ method: 'GET', url: '/v1/providers', headers: { authorization: `Bearer ${user.key}x` } });
    await t.app.inject({ method: 'GET', url: '/v1/admin/accounts/x/api-keys', headers: adminHeaders });

    expect(logs.lines.length).toBeGreaterThan(5);
    expect(logs.text).not.toContain(user.key);
    // The secret part, after the key's prefix and its `_` (the secret may itself contain `_`).
    expect(logs.text).not.toContain(user.key.slice(apiKeyPrefix(user.key)!.length + 1));
    expect(logs.text).not.toContain(providerKey);
    expect(logs.text).not.toContain(ADMIN_TOKEN);
  });

  it('censor credentials wherever a logged object carries them', () => {
    const connection = { provider: 'openai', api_key: 'sk-logged-by-mistake-123' };
    t.app.log.warn({ connection, headers: { authorization: 'Bearer ldr_live_logged_by_mistake' } }, 'a careless line');
    const line = logs.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'a careless line');
    expect(line).toMatchObject({ connection: { provider: 'openai', api_key: '[redacted]' }, headers: { authorization: '[redacted]' } });
    expect(logs.text).not.toContain('logged-by-mistake');
    expect(connection.api_key).toBe('sk-logged-by-mistake-123');
  });
});
