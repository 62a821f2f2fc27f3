import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProviderRouteError } from '../../src/providers/router.js';
import { VendorError } from '../../src/providers/vendor-errors.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { connection, rejection, routerWith, userSays } from './helpers.js';

// Primary: the openai connection (operator base URL). Backup: a custom endpoint on a second fake.
let primary: FakeVendor, backup: FakeVendor;
let env: ReturnType<typeof routerWith>;
const conns = () => [
  connection('openai', primary.apiKey, { priority: 0 }),
  connection('custom', backup.apiKey, { priority: 1, endpoint: backup.baseUrl }),
];

beforeAll(async () => {
  [primary, backup] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
  env = routerWith({ allowPrivateEndpoints: true, baseUrls: { openai: primary.baseUrl }, timeoutMs: 300 });
});
afterEach(() => {
  primary.reset();
  backup.reset();
  env.logs.length = 0;
});
afterAll(async () => {
  await env.router.close();
  await Promise.all([primary.close(), backup.close()]);
});

describe('falls back to the next candidate', () => {
  it.each([
    [401, 'auth_failed'], [403, 'auth_failed'], [408, 'http_error'], [409, 'http_error'], [429, 'rate_limited'],
    [500, 'server_error'], [502, 'server_error'], [503, 'server_error'], [504, 'server_error'], [529, 'server_error'],
  ])('on HTTP %i (%s)', async (status, reason) => {
    primary.script({ kind: 'error', status });
    const result = await env.router.call(userSays('hi'), conns());
    expect(result.content).toBe('echo: hi');
    expect(result.provider).toBe('custom');
    expect(result.attempts.map((a) => [a.provider, a.status, a.outcome, a.reason])).toEqual([
      ['openai', status, 'failed', reason],
      ['custom', 200, 'ok', undefined],
    ]);
    expect(backup.requests).toHaveLength(1);
  });

  it.each([
    ['a redirect, which is never followed', { kind: 'redirect', location: 'http://127.0.0.1:1/elsewhere' } as const, 302, 'http_error'],
    ['malformed JSON', { kind: 'malformed' } as const, 200, 'bad_response'],
    ['a body of the wrong shape', { kind: 'wrong-shape' } as const, 200, 'bad_response'],
    ['a connection reset', { kind: 'reset' } as const, null, 'connection_error'],
    ['a timeout', { kind: 'delay', ms: 1500 } as const, null, 'timeout'],
  ])('on %s', async (_name, step, status, reason) => {
    primary.script(step);
    const result = await env.router.call(userSays('hi'), conns());
    expect(result.provider).toBe('custom');
    expect(result.attempts[0]).toMatchObject({ provider: 'openai', status, outcome: 'failed', reason });
  });

  it('times out at timeoutMs, not later', async () => {
    primary.script({ kind: 'delay', ms: 1500 });
    const result = await env.router.call(userSays('hi'), conns());
    expect(result.attempts[0]!.latencyMs).toBeGreaterThanOrEqual(290);
    expect(result.attempts[0]!.latencyMs).toBeLessThan(1000);
  });

  it('on a refused connection', async () => {
    const dead = await startFakeOpenAI();
    const deadUrl = dead.baseUrl;
    await dead.close();
    const local = routerWith({ allowPrivateEndpoints: true, baseUrls: { openai: deadUrl } });
    try {
      const result = await local.router.call(userSays('hi'), conns());
      expect(result.attempts[0]).toMatchObject({ provider: 'openai', status: null, reason: 'connection_error' });
      expect(result.provider).toBe('custom');
    } finally {
      await local.router.close();
    }
  });
});

describe('does not fall back on the request\'s own fault', () => {
  it.each([400, 404, 413, 422])('HTTP %i is returned with the vendor message, prefixed by the provider', async (status) => {
    primary.script({ kind: 'error', status, message: `Vendor says no (${status})` });
    const error = await rejection(env.router.call(userSays('hi'), conns()));
    expect(error).toBeInstanceOf(ProviderRouteError);
    expect(error).toMatchObject({
      statusCode: status,
      type: 'invalid_request_error',
      code: 'provider_rejected_request',
      message: `openai: Vendor says no (${status}) (HTTP ${status})`,
    });
    expect(error.attempts).toEqual([expect.objectContaining({ provider: 'openai', status, outcome: 'failed' })]);
    expect(backup.requests).toHaveLength(0);
  });

  it('never repeats a custom endpoint\'s error body', async () => {
    backup.script({ kind: 'raw', status: 400, body: '<html>intranet secrets</html>' });
    const error = await rejection(env.router.call(userSays('hi'), [connection('custom', backup.apiKey, { endpoint: backup.baseUrl })]));
    expect(error.message).toBe('custom: the request was rejected (HTTP 400)');
    backup.script({ kind: 'error', status: 422, message: 'internal detail' });
    const again = await rejection(env.router.call(userSays('hi'), [connection('custom', backup.apiKey, { endpoint: backup.baseUrl })]));
    expect(again.message).not.toContain('internal detail');
  });
});

describe('when every candidate fails', () => {
  it('answers 502 upstream_unavailable listing every attempt', async () => {
    primary.script({ kind: 'error', status: 503 });
    backup.script({ kind: 'reset' });
    const error = await rejection(env.router.call(userSays('hi'), conns()));
    expect(error).toBeInstanceOf(ProviderRouteError);
    expect(error).toMatchObject({
      statusCode: 502,
      type: 'upstream_error',
      code: 'upstream_unavailable',
      message: 'All providers failed: openai (HTTP 503, server_error); custom (connection_error).',
    });
    expect(error.attempts).toHaveLength(2);
    expect(error.upstreamMs).toBeGreaterThan(0);
  });

  it('answers 429 upstream_rate_limited with the shortest retry-after when every attempt was rate limited', async () => {
    primary.script({ kind: 'error', status: 429, retryAfter: '7' });
    backup.script({ kind: 'error', status: 429, retryAfter: '3' });
    const error = await rejection(env.router.call(userSays('hi'), conns()));
    expect(error).toMatchObject({
      statusCode: 429,
      type: 'rate_limit_error',
      code: 'upstream_rate_limited',
      headers: { 'retry-after': '3' },
      message: 'Every provider rate-limited the request: openai (HTTP 429, rate_limited); custom (HTTP 429, rate_limited).',
    });
  });

  it('a mix of 429 and anything else is 502', async () => {
    primary.script({ kind: 'error', status: 429 });
    backup.script({ kind: 'error', status: 500 });
    expect((await rejection(env.router.call(userSays('hi'), conns()))).statusCode).toBe(502);
  });
});

describe('retry on the same connection', () => {
  it('retries once after a short retry-after when no other candidate is left', async () => {
    primary.script({ kind: 'error', status: 429, retryAfter: '0' });
    const result = await env.router.call(userSays('hi'), [connection('openai', primary.apiKey)]);
    expect(result.content).toBe('echo: hi');
    expect(result.attempts.map((a) => [a.status, a.outcome])).toEqual([[429, 'failed'], [200, 'ok']]);
  });

  it('falls back rather than waiting when another candidate is left', async () => {
    primary.script({ kind: 'error', status: 429, retryAfter: '0' });
    const result = await env.router.call(userSays('hi'), conns());
    expect(result.attempts.map((a) => a.provider)).toEqual(['openai', 'custom']);
    expect(primary.requests).toHaveLength(1);
  });

  it('does not wait for a retry-after longer than a second', async () => {
    primary.script({ kind: 'error', status: 429, retryAfter: '5' });
    const error = await rejection(env.router.call(userSays('hi'), [connection('openai', primary.apiKey)]));
    expect(error.statusCode).toBe(429);
    expect(primary.requests).toHaveLength(1);
  });
});

describe('the caller', () => {
  it('can abort: the call stops at once with an abort error and no fallback', async () => {
    // The vendor would answer only after 1.5 s; ending well before proves the abort stopped the wait.
    primary.script({ kind: 'delay', ms: 1500 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const started = Date.now();
    const error = await rejection(env.router.call(userSays('hi'), conns(), controller.signal));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(VendorError);
    expect(error.kind).toBe('abort');
    expect(backup.requests).toHaveLength(0);
  });

  it('gets 404 model_not_found naming the model, the configured providers and the ones that serve it', async () => {
    const error = await rejection(env.router.call({ ...userSays('x'), model: 'claude-3-opus' }, [connection('openai', 'k'), connection('groq', 'k')]));
    expect(error).toMatchObject({
      statusCode: 404,
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
      message: 'Model "claude-3-opus" is not served by any of your provider connections (configured: openai, groq). It is served by anthropic: add a connection with POST /v1/providers.',
    });
  });

  it('gets model_not_found with no connections at all', async () => {
    const error = await rejection(env.router.call(userSays('x'), []));
    expect(error.code).toBe('model_not_found');
    expect(error.message).toBe(
      'Model "gpt-4o-mini" is not served by any of your provider connections (no provider connections are configured). It is served by openai: add a connection with POST /v1/providers.',
    );
  });

  it('gets model_not_found naming the providers that take any name, for a name no provider serves by itself', async () => {
    const error = await rejection(env.router.call({ ...userSays('x'), model: 'llama3.2' }, [connection('openai', 'k')]));
    expect(error).toMatchObject({ statusCode: 404, code: 'model_not_found' });
    expect(error.message).toBe(
      'Model "llama3.2" is not served by any of your provider connections (configured: openai). No provider in the catalog serves that name by itself; ' +
        'a connection to openrouter, azure-openai, custom passes any model name on.',
    );
  });

  it('a connection that accepts any model name keeps serving every name', async () => {
    const result = await env.router.call({ ...userSays('x'), model: 'no-such-model-anywhere' }, [connection('custom', backup.apiKey, { endpoint: backup.baseUrl })]);
    expect(result.provider).toBe('custom');
    expect(backup.requests).toHaveLength(1);
  });

  it('gets model_not_found for an explicit provider it has no connection for', async () => {
    const error = await rejection(env.router.call({ ...userSays('x'), model: 'anthropic/claude-3-opus' }, [connection('openai', 'k')]));
    expect(error.message).toBe(
      'Model "anthropic/claude-3-opus" is not served by any of your provider connections: it selects provider "anthropic", which has no connection (configured: openai).',
    );
  });
});

describe('secrets', () => {
  const KEY = 'sk-live-SECRET-0123456789abcdef';

  it('never puts the key in error messages or logs, whatever the vendor echoes', async () => {
    const own = await startFakeOpenAI({ apiKey: KEY });
    const local = routerWith({ baseUrls: { openai: own.baseUrl } });
    const seen: string[] = [];
    try {
      const call = (c = [connection('openai', KEY)]) => local.router.call(userSays('hi'), c).then(() => '', (e: Error) => e.message);
      own.script({ kind: 'raw', status: 400, body: JSON.stringify({ error: { message: `Invalid request for key ${KEY}` } }) });
      seen.push(await call());
      own.script({ kind: 'raw', status: 401, body: JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }) });
      seen.push(await call());
      own.script({ kind: 'raw', status: 500, body: JSON.stringify({ error: { message: `boom ${KEY}` } }) });
      seen.push(await call());
      seen.push(await call([connection('openai', 'wrong-key')]));
      seen.push(await call());
      expect(seen[0]).toBe('openai: Invalid request for key [redacted] (HTTP 400)');
      expect(seen[1]).toBe('All providers failed: openai (HTTP 401, auth_failed).');
      expect(local.logs.length).toBeGreaterThanOrEqual(5);
      const everything = JSON.stringify([seen, local.logs]);
      expect(everything).not.toContain(KEY);
      expect(everything).not.toContain('SECRET');
    } finally {
      await local.router.close();
      await own.close();
    }
  });

  it('logs one line per attempt with provider, status, latency and outcome', async () => {
    primary.script({ kind: 'error', status: 503 });
    await env.router.call(userSays('hi'), conns());
    expect(env.logs.map((l) => [l.level, l.msg])).toEqual([['warn', 'provider attempt failed'], ['debug', 'provider attempt ok']]);
    expect(env.logs[0]!.obj).toMatchObject({ provider: 'openai', status: 503, outcome: 'failed', reason: 'server_error', latencyMs: expect.any(Number) });
    expect(env.logs[1]!.obj).toMatchObject({ provider: 'custom', status: 200, outcome: 'ok', vendorRequestId: expect.stringMatching(/^req_fake_/) });
  });
});
