// Issue 8, item 4: a circuit belongs to a connection as configured. Storing a new key (POST or
// PATCH) or a new endpoint starts a closed circuit at once, on this node and on another node
// that reloads the connection, instead of skipping the fixed connection for the cooldown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/providers/breaker.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, type TestApp } from '../helpers/build.js';

const GOOD = 'sk-good-0123456789abcdef';
const BAD = 'sk-bad-0123456789abcdef';

describe('a changed connection starts with a closed circuit', () => {
  let openai: FakeVendor, openrouter: FakeVendor, custom: FakeVendor;
  let a: TestApp, b: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;

  beforeAll(async () => {
    [openai, openrouter, custom] = await Promise.all([startFakeOpenAI({ apiKey: GOOD }), startFakeOpenAI({ apiKey: GOOD }), startFakeOpenAI({ apiKey: GOOD })]);
    const env = {
      PROVIDER_BASE_URL_OPENAI: openai.baseUrl,
      PROVIDER_BASE_URL_OPENROUTER: openrouter.baseUrl,
      // One failure opens a circuit for ten minutes: only a change can close it within the test.
      BREAKER_FAILURE_THRESHOLD: '1',
      BREAKER_COOLDOWN_MS: '600000',
    };
    a = await build(env);
    // A second node on the same database; it reloads connections on every request.
    b = await build({ ...env, KEY_CACHE_TTL_MS: '0' }, { database: a.database });
    user = await createUser(a.app);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
    await Promise.all([openai.close(), openrouter.close(), custom.close()]);
  });

  const chat = (node: TestApp, model = 'gpt-4o-mini') =>
    node.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: user.headers, payload: { model, messages: [{ role: 'user', content: 'hi' }] } });
  async function expectAttempts(node: TestApp, attempts: string, provider: string, model?: string) {
    const res = await chat(node, model);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-ladder-attempts']).toBe(attempts);
    expect(res.headers['x-ladder-provider']).toBe(provider);
  }
  const save = async (method: 'POST' | 'PATCH', provider: string, payload: object, status: number) => {
    const res = await a.app.inject({ method, url: method === 'POST' ? '/v1/providers' : `/v1/providers/${provider}`, headers: user.headers, payload: method === 'POST' ? { provider, ...payload } : payload });
    expect(res.statusCode, res.body).toBe(status);
  };

  it('after PATCH api_key, on this node and on another', async () => {
    await save('POST', 'openai', { api_key: BAD, priority: 0 }, 201);
    await save('POST', 'openrouter', { api_key: GOOD, priority: 1 }, 201);
    for (const node of [a, b]) await expectAttempts(node, 'openai;status=401;reason=auth_failed, openrouter;status=200', 'openrouter');
    for (const node of [a, b]) await expectAttempts(node, 'openai;reason=circuit_open, openrouter;status=200', 'openrouter');

    await save('PATCH', 'openai', { api_key: GOOD }, 200);
    for (const node of [a, b]) await expectAttempts(node, 'openai;status=200', 'openai');
  });

  it('after POST with a new key (update), on this node and on another', async () => {
    // Another bad key: the first one's circuit (same key, same endpoint) is still open.
    await save('POST', 'openai', { api_key: `${BAD}-2` }, 200);
    for (const node of [a, b]) await expectAttempts(node, 'openai;status=401;reason=auth_failed, openrouter;status=200', 'openrouter');
    for (const node of [a, b]) await expectAttempts(node, 'openai;reason=circuit_open, openrouter;status=200', 'openrouter');

    await save('POST', 'openai', { api_key: GOOD }, 200);
    for (const node of [a, b]) await expectAttempts(node, 'openai;status=200', 'openai');
  });

  it('after PATCH endpoint', async () => {
    const dead = await startFakeOpenAI();
    const deadUrl = dead.baseUrl;
    await dead.close();
    await save('POST', 'custom', { api_key: GOOD, priority: 0, endpoint: deadUrl }, 201);
    // A name only the any-name providers serve: custom (priority 0) first, then openrouter.
    const model = 'my-local-model';
    for (const node of [a, b]) await expectAttempts(node, 'custom;reason=connection_error, openrouter;status=200', 'openrouter', model);
    for (const node of [a, b]) await expectAttempts(node, 'custom;reason=circuit_open, openrouter;status=200', 'openrouter', model);

    await save('PATCH', 'custom', { endpoint: custom.baseUrl }, 200);
    for (const node of [a, b]) await expectAttempts(node, 'custom;status=200', 'custom', model);
  });
});

describe('CircuitBreaker memory', () => {
  it('remembers at most maxCircuits circuits, forgetting the least recently failed', () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 1000, maxCircuits: 3 }, () => 0);
    for (const id of ['a', 'b', 'c']) breaker.failure(id);
    breaker.failure('a');
    breaker.failure('d');
    expect(breaker.size).toBe(3);
    expect(['a', 'b', 'c', 'd'].map((id) => breaker.state(id))).toEqual(['open', 'closed', 'open', 'open']);
    for (let i = 0; i < 10_000; i++) breaker.failure(`x${i}`);
    expect(breaker.size).toBe(3);
  });
});
