import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/providers/breaker.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { connection, rejection, routerWith, userSays } from './helpers.js';

describe('CircuitBreaker', () => {
  it('opens after N consecutive failures, admits one trial after the cooldown, closes on success', () => {
    let now = 1000;
    const breaker = new CircuitBreaker({ failureThreshold: 3, cooldownMs: 500 }, () => now);
    breaker.failure('a');
    breaker.failure('a');
    expect(breaker.admit('a')).toBe('closed');
    breaker.failure('a');
    expect(breaker.state('a')).toBe('open');
    expect(breaker.admit('a')).toBe('open');
    now += 500;
    expect(breaker.state('a')).toBe('half-open');
    expect(breaker.admit('a')).toBe('trial');
    expect(breaker.admit('a')).toBe('open'); // one trial at a time
    breaker.success('a');
    expect(breaker.state('a')).toBe('closed');
    expect(breaker.admit('a')).toBe('closed');
  });

  it('a failed trial reopens for a full cooldown; a released trial frees the slot', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 100 }, () => now);
    breaker.failure('a');
    now = 100;
    expect(breaker.admit('a')).toBe('trial');
    breaker.release('a');
    expect(breaker.admit('a')).toBe('trial');
    breaker.failure('a');
    expect(breaker.admit('a')).toBe('open');
    now = 199;
    expect(breaker.admit('a')).toBe('open');
    now = 200;
    expect(breaker.admit('a')).toBe('trial');
  });

  it('a success resets the count of consecutive failures', () => {
    const breaker = new CircuitBreaker({ failureThreshold: 2 });
    breaker.failure('a');
    breaker.success('a');
    breaker.failure('a');
    expect(breaker.state('a')).toBe('closed');
  });
});

describe('router with the circuit breaker', () => {
  let flaky: FakeVendor, healthy: FakeVendor;
  let env: ReturnType<typeof routerWith>;

  beforeAll(async () => {
    [flaky, healthy] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
    env = routerWith({ allowPrivateEndpoints: true, baseUrls: { openai: flaky.baseUrl }, breaker: { failureThreshold: 2, cooldownMs: 200 } });
  });
  afterAll(async () => {
    await env.router.close();
    await Promise.all([flaky.close(), healthy.close()]);
  });

  it('skips a failing connection for the cooldown, then tries it again (half-open)', async () => {
    const conns = [connection('openai', flaky.apiKey, { priority: 0 }), connection('custom', healthy.apiKey, { priority: 1, endpoint: healthy.baseUrl })];
    flaky.setDefault({ kind: 'error', status: 503 });
    const outcomes = async () => (await env.router.call(userSays('hi'), conns)).attempts.map((a) => `${a.provider}:${a.outcome}:${a.reason ?? ''}`);

    expect(await outcomes()).toEqual(['openai:failed:server_error', 'custom:ok:']);
    expect(await outcomes()).toEqual(['openai:failed:server_error', 'custom:ok:']);
    // Open: the outage no longer costs a request to the flaky vendor.
    expect(await outcomes()).toEqual(['openai:skipped:circuit_open', 'custom:ok:']);
    expect(flaky.requests).toHaveLength(2);

    await new Promise((r) => setTimeout(r, 220));
    // Half-open trial fails: open again for a full cooldown.
    expect(await outcomes()).toEqual(['openai:failed:server_error', 'custom:ok:']);
    expect(await outcomes()).toEqual(['openai:skipped:circuit_open', 'custom:ok:']);

    flaky.setDefault(null);
    await new Promise((r) => setTimeout(r, 220));
    expect(await outcomes()).toEqual(['openai:ok:']);
    expect(await outcomes()).toEqual(['openai:ok:']);
  });

  it('still tries something when every candidate is open: the one whose cooldown ends first', async () => {
    const only = connection('openai', flaky.apiKey);
    flaky.reset();
    flaky.setDefault({ kind: 'error', status: 500 });
    for (let i = 0; i < 2; i++) await rejection(env.router.call(userSays('hi'), [only]));
    const error = await rejection(env.router.call(userSays('hi'), [only]));
    expect(error.statusCode).toBe(502);
    expect(flaky.requests).toHaveLength(3);
    flaky.setDefault(null);
    expect((await env.router.call(userSays('hi'), [only])).content).toBe('echo: hi');
  });
});
