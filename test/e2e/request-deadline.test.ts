// Issue 8, item 11: a direct chat call has one deadline (REQUEST_TIMEOUT_MS) over all its
// fallback attempts; past it the caller gets 504 request_timeout and the attempt in flight is
// aborted (the vendor sees its connection closed), instead of N hanging connections costing N
// full PROVIDER_TIMEOUT_MS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, type TestApp } from '../helpers/build.js';

async function eventually(check: () => boolean, ms = 2000): Promise<boolean> {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return check();
}

describe('the request deadline of a direct chat call', () => {
  let fakes: FakeVendor[];
  let t: TestApp;
  beforeAll(async () => {
    fakes = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI()]);
    // Every vendor hangs far longer than any timeout of the test.
    for (const fake of fakes) fake.setDefault({ kind: 'delay', ms: 60_000 });
    t = await build({
      PROVIDER_BASE_URL_OPENAI: fakes[0]!.baseUrl,
      PROVIDER_BASE_URL_OPENROUTER: fakes[1]!.baseUrl,
      PROVIDER_TIMEOUT_MS: '1000',
      REQUEST_TIMEOUT_MS: '1500',
    });
  });
  afterAll(async () => {
    await t.close();
    await Promise.all(fakes.map((f) => f.close()));
  });

  it('answers 504 request_timeout at the deadline and aborts every attempt', async () => {
    const user = await createUser(t.app);
    const connections = [
      { provider: 'openai', api_key: fakes[0]!.apiKey, priority: 0 },
      { provider: 'openrouter', api_key: fakes[1]!.apiKey, priority: 1 },
      { provider: 'custom', api_key: fakes[2]!.apiKey, priority: 2, endpoint: fakes[2]!.baseUrl },
    ];
    for (const payload of connections) {
      expect((await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload })).statusCode).toBe(201);
    }
    const started = performance.now();
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: user.headers,
      payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    });
    const elapsed = performance.now() - started;

    expect(res.statusCode).toBe(504);
    expect(res.json()).toEqual({
      error: {
        message: 'No provider answered within the request deadline of 1500 ms: openai (timeout); openrouter (request_timeout).',
        type: 'upstream_error',
        code: 'request_timeout',
        param: null,
      },
    });
    expect(res.headers['x-ladder-attempts']).toBe('openai;reason=timeout, openrouter;reason=request_timeout');
    // Three attempts of 1 s each would take 3 s; the deadline ends the call at 1.5 s.
    expect(elapsed).toBeGreaterThanOrEqual(1450);
    expect(elapsed).toBeLessThan(2900);
    // The attempt cut by its own timeout and the one cut by the deadline both closed their connection.
    expect(fakes[0]!.requests).toHaveLength(1);
    expect(fakes[1]!.requests).toHaveLength(1);
    expect(await eventually(() => fakes[0]!.requests[0]!.clientClosed && fakes[1]!.requests[0]!.clientClosed)).toBe(true);
    expect(fakes[2]!.requests).toHaveLength(0);
  });
});
