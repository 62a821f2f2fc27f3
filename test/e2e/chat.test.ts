// Direct chat completions end to end: the official openai client, the real TLS listener, and
// fake vendor servers on real sockets speaking each vendor's wire format (issue 3, items 5-8).
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startFakeAnthropic, startFakeAzure, startFakeGemini, startFakeOpenAI, type FakeVendor, type Script } from '../fakes/vendors.js';
import { adminHeaders, createUser, LogCapture, testConfig } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

const KEYS = {
  openai: 'sk-e2e-openai-SECRET-1111111111',
  openrouter: 'sk-or-e2e-SECRET-2222222222',
  anthropic: 'sk-ant-e2e-SECRET-3333333333',
  google: 'AIza-e2e-SECRET-4444444444',
  azure: 'azure-e2e-SECRET-5555555555',
};
const TIMEOUT_MS = 1000;
const QUOTA_NOW = Date.UTC(2026, 0, 5, 10, 0, 20);
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const SERVER_TIMING = /^upstream;dur=\d+\.\d{3}, overhead;dur=\d+\.\d{3}$/;

interface ConnectionSpec {
  provider: string;
  api_key: string;
  priority?: number;
  endpoint?: string;
}

let server: RunningServer;
let database: Database;
const logs = new LogCapture();
const fakes = {} as Record<'openai' | 'openrouter' | 'anthropic' | 'gemini' | 'azure', FakeVendor>;
// The listener's certificate is self-signed; this agent is the test's way of trusting it.
const tls = new Agent({ connect: { rejectUnauthorized: false } });

beforeAll(async () => {
  fakes.openai = await startFakeOpenAI({ apiKey: KEYS.openai });
  fakes.openrouter = await startFakeOpenAI({ apiKey: KEYS.openrouter });
  fakes.anthropic = await startFakeAnthropic({ apiKey: KEYS.anthropic });
  fakes.gemini = await startFakeGemini({ apiKey: KEYS.google });
  fakes.azure = await startFakeAzure({ apiKey: KEYS.azure });
  database = await openTestDatabase();
  const config = testConfig({
    PORT: '0',
    LOG_LEVEL: 'info',
    PROVIDER_BASE_URL_OPENAI: fakes.openai.baseUrl,
    PROVIDER_BASE_URL_OPENROUTER: fakes.openrouter.baseUrl,
    PROVIDER_BASE_URL_ANTHROPIC: fakes.anthropic.baseUrl,
    PROVIDER_BASE_URL_GOOGLE: fakes.gemini.baseUrl,
    PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
    // One failure opens a circuit for the rest of the file; every test uses fresh connections.
    BREAKER_FAILURE_THRESHOLD: '1',
    BREAKER_COOLDOWN_MS: '600000',
    // The ledger writes when a test asks it to, so the statement count below sees only requests.
    USAGE_FLUSH_MS: '600000',
    // Metrics on: the hot-path checks below hold with them (docs/metrics.md).
    METRICS_TOKEN: 'chat-e2e-metrics-token-0123',
    // No background workers, whose safety-net poll would land among the counted statements.
    WORKER_CONCURRENCY: '0',
    // Slices of spend counters stay while a test runs, however slow the machine.
    QUOTA_SPEND_IDLE_MS: '600000',
  });
  // Quota windows are read from a clock that stays mid-minute, so no test crosses a window.
  server = await startServer(config, { logStream: logs, database, clock: () => QUOTA_NOW });
});

afterAll(async () => {
  await server?.close();
  await database?.close();
  await Promise.all(Object.values(fakes).map((f) => f.close()));
  await tls.close();
});

beforeEach(() => {
  for (const fake of Object.values(fakes)) fake.reset();
});

/** A new account with the given connections, and an openai client calling as it. */
async function account(connections: ConnectionSpec[]) {
  const user = await createUser(server.app);
  for (const connection of connections) {
    const res = await server.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: connection });
    if (res.statusCode !== 201) throw new Error(`adding ${connection.provider} failed: ${res.body}`);
  }
  const client = new OpenAI({
    apiKey: user.key,
    baseURL: `${server.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    fetch: undiciFetch as unknown as typeof fetch,
    fetchOptions: { dispatcher: tls } as Record<string, unknown>,
  });
  return { ...user, client };
}

const openaiConnection = (priority = 0): ConnectionSpec => ({ provider: 'openai', api_key: KEYS.openai, priority });
const openrouterConnection = (priority = 10): ConnectionSpec => ({ provider: 'openrouter', api_key: KEYS.openrouter, priority });

/** A raw HTTPS call, for what the openai client would refuse to send. */
async function raw(method: 'GET' | 'POST' | 'PATCH', path: string, key: string, body?: unknown) {
  const res = await request(`${server.url}${path}`, {
    method,
    dispatcher: tls,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as any };
}

async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

const hello = [{ role: 'user' as const, content: 'Hello there' }];

describe('each vendor format, end to end', () => {
  it('openai: the request is passed through and the answer comes back exactly', async () => {
    const { client } = await account([openaiConnection()]);
    const started = Math.floor(Date.now() / 1000);
    const { data, response } = await client.chat.completions
      .create({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello there' },
        ],
        temperature: 0.2,
        max_tokens: 50,
      })
      .withResponse();

    expect(data.id).toMatch(new RegExp(`^ldr-chat-${UUID}$`));
    expect(data.created).toBeGreaterThanOrEqual(started);
    expect(data).toEqual({
      id: data.id,
      object: 'chat.completion',
      created: data.created,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'echo: Hello there', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 'Be brief.'.length + 'Hello there'.length, completion_tokens: 17, total_tokens: 20 + 17 },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ladder-provider')).toBe('openai');
    expect(response.headers.get('x-ladder-attempts')).toBe('openai;status=200');
    expect(response.headers.get('server-timing')).toMatch(SERVER_TIMING);

    expect(fakes.openai.requests).toHaveLength(1);
    const sent = fakes.openai.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${KEYS.openai}`);
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there' },
      ],
      temperature: 0.2,
      max_tokens: 50,
    });
  });

  it('openai: content parts (text and image_url) are sent as they are', async () => {
    const { client } = await account([openaiConnection()]);
    const content = [
      { type: 'text' as const, text: 'What is in this picture?' },
      { type: 'image_url' as const, image_url: { url: 'https://images.example.test/cat.png', detail: 'low' as const } },
    ];
    const data = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content }] });
    expect(data.choices[0]!.message.content).toBe('echo: What is in this picture?');
    expect(fakes.openai.requests[0]!.body).toEqual({ model: 'gpt-4o', messages: [{ role: 'user', content }] });
  });

  it('openai: a reasoning model gets max_completion_tokens', async () => {
    const { client } = await account([openaiConnection()]);
    await client.chat.completions.create({ model: 'o3-mini', messages: hello, max_tokens: 100 });
    expect(fakes.openai.requests[0]!.body).toEqual({ model: 'o3-mini', messages: hello, max_completion_tokens: 100 });
  });

  it('anthropic: the system prompt moves to `system` and max_tokens defaults to 4096', async () => {
    const { client } = await account([{ provider: 'anthropic', api_key: KEYS.anthropic }]);
    const { data, response } = await client.chat.completions
      .create({
        model: 'claude-3-5-haiku-latest',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello!' },
          { role: 'user', content: 'Tell me a joke' },
        ],
        temperature: 0.5,
      })
      .withResponse();

    const sent = fakes.anthropic.requests[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(KEYS.anthropic);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({
      model: 'claude-3-5-haiku-latest',
      max_tokens: 4096,
      system: 'You are terse.',
      temperature: 0.5,
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'Tell me a joke' },
      ],
    });
    const prompt = 'You are terse.HiHello!Tell me a joke'.length;
    expect(data).toMatchObject({
      object: 'chat.completion',
      model: 'claude-3-5-haiku-latest',
      choices: [{ index: 0, message: { role: 'assistant', content: 'echo: Tell me a joke' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: prompt, completion_tokens: 20, total_tokens: prompt + 20 },
    });
    expect(data.id).toMatch(new RegExp(`^ldr-chat-${UUID}$`));
    expect(response.headers.get('x-ladder-provider')).toBe('anthropic');
  });

  it('anthropic: an explicit max_tokens is sent, images become blocks, and stop reasons are mapped', async () => {
    const { client } = await account([{ provider: 'anthropic', api_key: KEYS.anthropic }]);
    fakes.anthropic.script({ kind: 'reply', content: 'A cat, cut short', finish: 'max_tokens', usage: { prompt: 30, completion: 5 } });
    const data = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 5,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
    });
    expect(fakes.anthropic.requests[0]!.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 5,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
      ],
    });
    expect(data.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: 'A cat, cut short', refusal: null }, logprobs: null, finish_reason: 'length' });
    expect(data.usage).toEqual({ prompt_tokens: 30, completion_tokens: 5, total_tokens: 35 });
  });

  it('gemini: contents and parts, systemInstruction, generationConfig, usageMetadata', async () => {
    const { client } = await account([{ provider: 'google', api_key: KEYS.google }]);
    const { data, response } = await client.chat.completions
      .create({
        model: 'gemini-2.0-flash',
        messages: [
          { role: 'system', content: 'Be terse.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello!' },
          { role: 'user', content: 'A joke?' },
        ],
        temperature: 0.3,
        max_tokens: 64,
      })
      .withResponse();

    const sent = fakes.gemini.requests[0]!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(KEYS.google);
    expect(sent.query).toEqual({});
    expect(sent.body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello!' }] },
        { role: 'user', parts: [{ text: 'A joke?' }] },
      ],
      systemInstruction: { parts: [{ text: 'Be terse.' }] },
      generationConfig: { temperature: 0.3, maxOutputTokens: 64 },
    });
    const prompt = 'Be terse.HiHello!A joke?'.length;
    expect(data).toMatchObject({
      model: 'gemini-2.0-flash',
      choices: [{ index: 0, message: { role: 'assistant', content: 'echo: A joke?' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: prompt, completion_tokens: 13, total_tokens: prompt + 13 },
    });
    expect(response.headers.get('x-ladder-provider')).toBe('google');
  });

  it('gemini: finishReason SAFETY is content_filter', async () => {
    const { client } = await account([{ provider: 'google', api_key: KEYS.google }]);
    fakes.gemini.script({ kind: 'reply', content: '', finish: 'SAFETY', usage: { prompt: 4, completion: 0 } });
    const data = await client.chat.completions.create({ model: 'gemini-2.5-pro', messages: hello });
    expect(data.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' });
    expect(data.usage).toEqual({ prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 });
  });

  it('azure-openai: deployment URL, api-key header, api-version, no model in the body', async () => {
    const { client } = await account([{ provider: 'azure-openai', api_key: KEYS.azure, endpoint: fakes.azure.baseUrl }]);
    const { data, response } = await client.chat.completions
      .create({ model: 'prod-gpt4o', messages: hello, max_tokens: 20, temperature: 0 })
      .withResponse();

    const sent = fakes.azure.requests[0]!;
    expect(sent.path).toBe('/openai/deployments/prod-gpt4o/chat/completions');
    expect(sent.query).toEqual({ 'api-version': '2024-10-21' });
    expect(sent.headers['api-key']).toBe(KEYS.azure);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({ messages: hello, max_tokens: 20, temperature: 0 });
    expect(data).toMatchObject({
      model: 'prod-gpt4o',
      choices: [{ index: 0, message: { role: 'assistant', content: 'echo: Hello there', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 11, completion_tokens: 17, total_tokens: 28 },
    });
    expect(response.headers.get('x-ladder-provider')).toBe('azure-openai');
  });

  it('custom endpoint: the OpenAI format at the stored base URL, any model name', async () => {
    const { client } = await account([{ provider: 'custom', api_key: KEYS.openrouter, endpoint: fakes.openrouter.baseUrl }]);
    const { data, response } = await client.chat.completions.create({ model: 'llama3.2:3b', messages: hello }).withResponse();
    expect(data.model).toBe('llama3.2:3b');
    expect(data.choices[0]!.message.content).toBe('echo: Hello there');
    expect(response.headers.get('x-ladder-provider')).toBe('custom');
    expect(fakes.openrouter.requests[0]!.path).toBe('/v1/chat/completions');
    expect(fakes.openrouter.requests[0]!.headers.authorization).toBe(`Bearer ${KEYS.openrouter}`);
    expect(fakes.openrouter.requests[0]!.body).toEqual({ model: 'llama3.2:3b', messages: hello });
  });
});

describe('fallback', () => {
  const fallsBackOn: Array<[string, Script, string]> = [
    ['HTTP 500', { kind: 'error', status: 500 }, 'openai;status=500;reason=server_error'],
    ['HTTP 503', { kind: 'error', status: 503 }, 'openai;status=503;reason=server_error'],
    ['HTTP 429', { kind: 'error', status: 429, retryAfter: '30' }, 'openai;status=429;reason=rate_limited'],
    ['HTTP 401', { kind: 'error', status: 401 }, 'openai;status=401;reason=auth_failed'],
    ['HTTP 408', { kind: 'error', status: 408 }, 'openai;status=408;reason=http_error'],
    ['HTTP 409', { kind: 'error', status: 409 }, 'openai;status=409;reason=http_error'],
    ['a timeout', { kind: 'delay', ms: TIMEOUT_MS * 3 }, 'openai;reason=timeout'],
    ['a connection reset', { kind: 'reset' }, 'openai;reason=connection_error'],
    ['invalid JSON', { kind: 'malformed' }, 'openai;status=200;reason=bad_response'],
    ['the wrong shape', { kind: 'wrong-shape' }, 'openai;status=200;reason=bad_response'],
    ['a redirect', { kind: 'redirect', location: 'http://169.254.169.254/' }, 'openai;status=302;reason=http_error'],
  ];
  for (const [what, step, attempt] of fallsBackOn) {
    it(`falls back to the next provider on ${what}`, async () => {
      const { client } = await account([openaiConnection(0), openrouterConnection(10)]);
      fakes.openai.script(step);
      const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
      expect(data.choices[0]!.message.content).toBe('echo: Hello there');
      expect(data.model).toBe('gpt-4o-mini');
      expect(response.headers.get('x-ladder-provider')).toBe('openrouter');
      expect(response.headers.get('x-ladder-attempts')).toBe(`${attempt}, openrouter;status=200`);
      expect(response.headers.get('server-timing')).toMatch(SERVER_TIMING);
      expect(fakes.openai.requests).toHaveLength(1);
      expect(fakes.openrouter.requests).toHaveLength(1);
      expect(fakes.openrouter.requests[0]!.headers.authorization).toBe(`Bearer ${KEYS.openrouter}`);
    });
  }

  it('a dead stored key (the vendor says 401) falls back', async () => {
    const { client } = await account([{ provider: 'openai', api_key: 'sk-revoked-key-000000000', priority: 0 }, openrouterConnection(10)]);
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
    expect(response.headers.get('x-ladder-attempts')).toBe('openai;status=401;reason=auth_failed, openrouter;status=200');
  });

  it('falls back across vendor formats: anthropic overloaded, the aggregator answers in the OpenAI format', async () => {
    const { client } = await account([
      { provider: 'anthropic', api_key: KEYS.anthropic, priority: 0 },
      { provider: 'openrouter', api_key: KEYS.openrouter, priority: 5 },
    ]);
    fakes.anthropic.script({ kind: 'error', status: 529 });
    const { data, response } = await client.chat.completions.create({ model: 'claude-3-5-haiku-latest', messages: hello }).withResponse();
    expect(data.choices[0]!.message.content).toBe('echo: Hello there');
    expect(response.headers.get('x-ladder-attempts')).toBe('anthropic;status=529;reason=server_error, openrouter;status=200');
    expect(fakes.openrouter.requests[0]!.body).toEqual({ model: 'claude-3-5-haiku-latest', messages: hello });
  });

  const noFallbackOn: Array<[number, string]> = [
    [400, "Invalid 'messages': too long."],
    [404, 'The model `gpt-4o-mini` does not exist or you do not have access to it.'],
    [413, 'Request too large.'],
    [422, 'Unprocessable: temperature out of range.'],
  ];
  for (const [status, message] of noFallbackOn) {
    it(`does not fall back on HTTP ${status}: the vendor's message comes back in our envelope`, async () => {
      const { client } = await account([openaiConnection(0), openrouterConnection(10)]);
      fakes.openai.script({ kind: 'error', status, message });
      const err = await apiError(client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }));
      expect(err.status).toBe(status);
      expect(err.error).toEqual({
        message: `openai: ${message} (HTTP ${status})`,
        type: 'invalid_request_error',
        code: 'provider_rejected_request',
        param: null,
      });
      expect(err.headers!.get('x-ladder-attempts')).toBe(`openai;status=${status};reason=${status === 404 ? 'not_found' : 'rejected'}`);
      expect(err.headers!.get('x-ladder-provider')).toBeNull();
      expect(fakes.openrouter.requests).toHaveLength(0);
    });
  }

  it('a 400 from a custom endpoint is not echoed verbatim', async () => {
    const { client } = await account([{ provider: 'custom', api_key: KEYS.openrouter, endpoint: fakes.openrouter.baseUrl }]);
    fakes.openrouter.script({ kind: 'error', status: 400, message: 'internal detail: db at 10.0.0.5 said no' });
    const err = await apiError(client.chat.completions.create({ model: 'my-local-model', messages: hello }));
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ code: 'provider_rejected_request' });
    expect(JSON.stringify(err.error)).not.toContain('10.0.0.5');
  });

  it('tries connections in priority order, lowest number first, and follows a PATCH', async () => {
    const user = await account([openaiConnection(20), openrouterConnection(5)]);
    const first = await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
    expect(first.response.headers.get('x-ladder-provider')).toBe('openrouter');
    expect(fakes.openai.requests).toHaveLength(0);

    expect((await raw('PATCH', '/v1/providers/openai', user.key, { priority: 1 })).status).toBe(200);
    const second = await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
    expect(second.response.headers.get('x-ladder-provider')).toBe('openai');
    expect(fakes.openai.requests).toHaveLength(1);
    expect(fakes.openrouter.requests).toHaveLength(1);
  });

  it('an explicit provider prefix picks that provider alone and strips the prefix', async () => {
    const { client } = await account([openaiConnection(0), openrouterConnection(10)]);
    const { data, response } = await client.chat.completions.create({ model: 'openrouter/gpt-4o-mini', messages: hello }).withResponse();
    expect(data.model).toBe('openrouter/gpt-4o-mini');
    expect(response.headers.get('x-ladder-provider')).toBe('openrouter');
    expect(fakes.openrouter.requests[0]!.body.model).toBe('gpt-4o-mini');
    expect(fakes.openai.requests).toHaveLength(0);
  });

  it('when every provider fails: 502 upstream_unavailable listing each attempt', async () => {
    const { client } = await account([openaiConnection(0), openrouterConnection(10)]);
    fakes.openai.script({ kind: 'error', status: 500 });
    fakes.openrouter.script({ kind: 'reset' });
    const err = await apiError(client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }));
    expect(err.status).toBe(502);
    expect(err.error).toEqual({
      message: 'All providers failed: openai (HTTP 500, server_error); openrouter (connection_error).',
      type: 'upstream_error',
      code: 'upstream_unavailable',
      param: null,
    });
    expect(err.headers!.get('x-ladder-attempts')).toBe('openai;status=500;reason=server_error, openrouter;reason=connection_error');
    expect(err.headers!.get('server-timing')).toMatch(SERVER_TIMING);
  });

  it('when every provider rate-limits: 429 upstream_rate_limited with the shortest retry-after', async () => {
    const { client } = await account([openaiConnection(0), openrouterConnection(10)]);
    fakes.openai.script({ kind: 'error', status: 429, retryAfter: '20' });
    fakes.openrouter.script({ kind: 'error', status: 429, retryAfter: '7' });
    const err = await apiError(client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }));
    expect(err.status).toBe(429);
    expect(err.error).toMatchObject({ type: 'rate_limit_error', code: 'upstream_rate_limited' });
    expect(err.headers!.get('retry-after')).toBe('7');
  });

  it('the circuit breaker skips a provider that just failed, without a request to it', async () => {
    const { client } = await account([openaiConnection(0), openrouterConnection(10)]);
    fakes.openai.setDefault({ kind: 'error', status: 503 });
    const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
    expect(first.response.headers.get('x-ladder-attempts')).toBe('openai;status=503;reason=server_error, openrouter;status=200');
    expect(fakes.openai.requests).toHaveLength(1);

    for (let i = 0; i < 3; i++) {
      const next = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
      expect(next.response.headers.get('x-ladder-attempts')).toBe('openai;reason=circuit_open, openrouter;status=200');
      expect(next.response.headers.get('x-ladder-provider')).toBe('openrouter');
    }
    expect(fakes.openai.requests).toHaveLength(1);
    expect(fakes.openrouter.requests).toHaveLength(4);
  });

  it('a caller that hangs up stops the vendor call, which does not count against the connection', async () => {
    const { key, client } = await account([openaiConnection(0), openrouterConnection(10)]);
    const before = logs.lines.length;
    fakes.openai.script({ kind: 'delay', ms: TIMEOUT_MS * 0.8 });
    const hangUp = new AbortController();
    const pending = request(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      dispatcher: tls,
      signal: hangUp.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: hello }),
    });
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 0.2));
    hangUp.abort();
    await expect(pending).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const attempts = logs.lines.slice(before).filter((l) => l.includes('provider attempt')).map((l) => JSON.parse(l));
    expect(attempts.map((a) => [a.provider, a.outcome, a.reason])).toEqual([['openai', 'failed', 'aborted']]);
    // Not tried elsewhere, and not held against openai: the next call goes there first.
    expect(fakes.openrouter.requests).toHaveLength(0);
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
    expect(response.headers.get('x-ladder-attempts')).toBe('openai;status=200');
  });

  it.each([
    ['/v1/messages', { model: 'gpt-4o-mini', max_tokens: 16, messages: hello }],
    ['/v1/responses', { model: 'gpt-4o-mini', input: 'Hello there' }],
    ['/v1/embeddings', { model: 'text-embedding-3-small', input: 'Hello there' }],
  ])('a caller that hangs up on %s closes the vendor connection at once, and nothing is tried elsewhere', async (path, body) => {
    const { key } = await account([openaiConnection(0), openrouterConnection(10)]);
    fakes.openai.script({ kind: 'delay', ms: TIMEOUT_MS * 0.8 });
    const hangUp = new AbortController();
    const pending = request(`${server.url}${path}`, {
      method: 'POST',
      dispatcher: tls,
      signal: hangUp.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 0.2));
    const hungUpAt = Date.now();
    hangUp.abort();
    await expect(pending).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fakes.openai.requests).toHaveLength(1);
    const [sent] = fakes.openai.requests;
    expect(sent!.clientClosed).toBe(true);
    // Well before the vendor's delayed answer would have come.
    expect(sent!.abortedAt! - hungUpAt).toBeLessThan(TIMEOUT_MS * 0.4);
    expect(fakes.openrouter.requests).toHaveLength(0);
  });

  it('the breaker is per connection: another account with the same vendor is still tried', async () => {
    const a = await account([openaiConnection(0), openrouterConnection(10)]);
    fakes.openai.script({ kind: 'error', status: 500 });
    await a.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
    const b = await account([openaiConnection(0)]);
    const { response } = await b.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
    expect(response.headers.get('x-ladder-provider')).toBe('openai');
    expect(fakes.openai.requests).toHaveLength(2);
  });
});

describe('requests the service refuses', () => {
  it('a model none of the connections serves is 404 model_not_found (the SDK\'s NotFoundError), naming it and the providers', async () => {
    const { client } = await account([openaiConnection(0), { provider: 'google', api_key: KEYS.google }]);
    const err = await apiError(client.chat.completions.create({ model: 'claude-3-5-haiku-latest', messages: hello }));
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.status).toBe(404);
    expect(err.error).toEqual({
      message:
        'Model "claude-3-5-haiku-latest" is not served by any of your provider connections (configured: openai, google). It is served by anthropic: add a connection with POST /v1/providers.',
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
    });
    expect(fakes.openai.requests).toHaveLength(0);
  });

  it('without any connection the message says so', async () => {
    const { client } = await account([]);
    const err = await apiError(client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }));
    expect(err.status).toBe(404);
    expect(err.code).toBe('model_not_found');
    expect(err.message).toContain('no provider connections are configured');
  });

  it('stream: true streams (test/e2e/chat-stream.test.ts); validation still comes first, as plain JSON', async () => {
    const { client } = await account([openaiConnection()]);
    const err = await apiError(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'x' }], stream: true }));
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ code: 'missing_user_message', param: 'messages', type: 'invalid_request_error' });
    expect(fakes.openai.requests).toHaveLength(0);
  });

  it('stream: false is accepted', async () => {
    const { client } = await account([openaiConnection()]);
    const data = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello, stream: false });
    expect(data.choices[0]!.message.content).toBe('echo: Hello there');
  });

  it('missing model or messages is 400 missing_required_field naming it', async () => {
    const { key } = await account([openaiConnection()]);
    for (const [body, param] of [
      [{ messages: hello }, 'model'],
      [{ model: 'gpt-4o-mini' }, 'messages'],
    ] as const) {
      const res = await raw('POST', '/v1/chat/completions', key, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: { message: `Missing required field: ${param}.`, type: 'invalid_request_error', code: 'missing_required_field', param },
      });
    }
    expect(fakes.openai.requests).toHaveLength(0);
  });

  it('without an API key: 401 authentication_error', async () => {
    const res = await raw('POST', '/v1/chat/completions', 'ldr_live_wrong', { model: 'gpt-4o-mini', messages: hello });
    expect(res.status).toBe(401);
    expect(res.body.error.type).toBe('authentication_error');
  });
});

describe('secrets and the hot path', () => {
  it('logs every attempt but neither the account key nor any provider key', async () => {
    const before = logs.lines.length;
    const { client, key } = await account([openaiConnection(0), openrouterConnection(10)]);
    fakes.openai.script({ kind: 'error', status: 401, message: `Incorrect API key provided: ${KEYS.openai.slice(0, 6)}…` });
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
    fakes.openrouter.script({ kind: 'error', status: 400, message: 'bad' });
    await apiError(client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }));
    await new Promise((resolve) => setTimeout(resolve, 50));

    const text = logs.lines.slice(before).join('\n');
    expect(text).toContain('"provider":"openai"');
    // The failed attempt's line carries the id of the request it belongs to.
    const failedLine = logs.lines.slice(before).map((l) => JSON.parse(l)).find((l) => l.msg === 'provider attempt failed');
    expect(failedLine).toMatchObject({ request_id: response.headers.get('x-request-id'), provider: 'openai', status: 401 });
    // The answering attempt is summed up in the request line.
    expect(text).toMatch(/"provider":"openrouter","attempts":"openai;status=401;reason=[a-z_]+, openrouter;status=200"/);
    expect(text).toContain('"path":"/v1/chat/completions"');
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(-20));
    for (const providerKey of Object.values(KEYS)) {
      expect(text).not.toContain(providerKey);
      expect(text).not.toContain(providerKey.slice(-12));
    }
  });

  it('after a warm-up call, chat completions make no database round trip; a write is seen at once', async () => {
    const user = await account([openaiConnection(0)]);
    // Count every statement the app's database client runs (drizzle and raw queries alike).
    const client = (server.app.db as unknown as { $client: unknown }).$client as Record<string, (...args: unknown[]) => unknown>;
    // `prepared`: the embedded database's named statements.
    const counted = ['query', 'exec', 'transaction', 'prepared'].filter((name) => typeof client[name] === 'function');
    const originals = Object.fromEntries(counted.map((name) => [name, client[name]!]));
    let statements = 0;
    for (const name of counted) {
      client[name] = function (this: unknown, ...args: unknown[]) {
        statements += 1;
        return originals[name]!.apply(this, args);
      };
    }
    try {
      await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
      await server.app.usageLedger.flush();
      statements = 0;
      for (let i = 0; i < 5; i++) {
        const { response } = await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
        expect(response.headers.get('x-ladder-provider')).toBe('openai');
      }
      expect(statements).toBe(0);

      // The counter does see the database: listing connections reads it.
      expect((await raw('GET', '/v1/providers', user.key)).status).toBe(200);
      expect(statements).toBeGreaterThan(0);

      // A write on this node evicts the cached connections: the next call routes by the new data.
      expect((await raw('POST', '/v1/providers', user.key, openrouterConnection(0))).status).toBe(201);
      expect((await raw('PATCH', '/v1/providers/openai', user.key, { priority: 50 })).status).toBe(200);
      statements = 0;
      const after = await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
      expect(after.response.headers.get('x-ladder-provider')).toBe('openrouter');
      expect(statements).toBeGreaterThan(0);
    } finally {
      for (const name of counted) client[name] = originals[name]!;
    }
  });

  it('with rate limits on the key and the account, a warm call still makes no database round trip and carries the rate headers', async () => {
    const user = await account([openaiConnection(0)]);
    // Spend limits hold each call's worst case in the shared counters: see the next test.
    const limits = { requests_per_minute: 1000, tokens_per_minute: 1_000_000 };
    for (const url of [`/v1/admin/api-keys/${user.keyId}/limits`, `/v1/admin/accounts/${user.username}/limits`]) {
      expect((await server.app.inject({ method: 'PUT', url, headers: adminHeaders, payload: limits })).statusCode).toBe(200);
    }
    const client = (server.app.db as unknown as { $client: unknown }).$client as Record<string, (...args: unknown[]) => unknown>;
    // `connect`: a PostgreSQL pool hands out a client for each transaction; `prepared`: the embedded database's named statements.
    const counted = ['query', 'exec', 'transaction', 'connect', 'prepared'].filter((name) => typeof client[name] === 'function');
    const originals = Object.fromEntries(counted.map((name) => [name, client[name]!]));
    let statements = 0;
    for (const name of counted) {
      client[name] = function (this: unknown, ...args: unknown[]) {
        statements += 1;
        return originals[name]!.apply(this, args);
      };
    }
    try {
      // The first call loads the limits and spend, and takes the first share of each window.
      await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
      await server.app.usageLedger.flush();
      statements = 0;
      for (let i = 0; i < 5; i++) {
        const { response } = await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
        expect(response.headers.get('x-ratelimit-limit-requests')).toBe('1000');
        expect(response.headers.get('x-ratelimit-remaining-requests')).toBe(String(1000 - 2 - i));
        expect(response.headers.get('x-ratelimit-reset-requests')).toBe('40s');
        expect(response.headers.get('x-ratelimit-limit-tokens')).toBe('1000000');
        expect(Number(response.headers.get('x-ladder-cost-usd'))).toBeGreaterThan(0);
      }
      expect(statements).toBe(0);
      // What the calls cost reaches the database with the next ledger batch.
      await server.app.usageLedger.flush();
      expect(statements).toBeGreaterThan(0);
    } finally {
      for (const name of counted) client[name] = originals[name]!;
    }
  });

  it('with spend limits, a warm call is admitted from the slice its process holds: no database round trip', async () => {
    const user = await account([openaiConnection(0)]);
    const limits = { usd_per_day: 100, usd_per_month: 1000 };
    for (const url of [`/v1/admin/api-keys/${user.keyId}/limits`, `/v1/admin/accounts/${user.username}/limits`]) {
      expect((await server.app.inject({ method: 'PUT', url, headers: adminHeaders, payload: limits })).statusCode).toBe(200);
    }
    const client = (server.app.db as unknown as { $client: unknown }).$client as Record<string, (...args: unknown[]) => unknown>;
    const counted = ['query', 'exec', 'transaction', 'connect', 'prepared'].filter((name) => typeof client[name] === 'function');
    const originals = Object.fromEntries(counted.map((name) => [name, client[name]!]));
    const statements: string[] = [];
    for (const name of counted) {
      client[name] = function (this: unknown, ...args: unknown[]) {
        // A named statement (`prepared(name, text)`, or node-postgres's `{ name, text }`) by its name.
        const [first] = args as [unknown];
        statements.push(String(typeof first === 'string' ? first : (first as { name?: string; text?: string } | undefined)?.name ?? (first as { text?: string } | undefined)?.text ?? name));
        return originals[name]!.apply(this, args);
      };
    }
    try {
      // The first call takes its worst case and a slice of each of the four counters (key and
      // account, day and month) in one statement.
      await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
      expect(statements.filter((s) => s === 'quota_spend_hold')).toHaveLength(1);
      await server.app.usageLedger.flush();
      statements.length = 0;
      for (let i = 0; i < 5; i++) {
        const { response } = await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello }).withResponse();
        expect(Number(response.headers.get('x-ladder-cost-usd'))).toBeGreaterThan(0);
      }
      expect(statements).toEqual([]);
      // What they cost reaches the counters with the next ledger batch, which takes as much of
      // their holds off in its own statement: the counters do not move, and no release follows.
      const counters = async () => {
        const rows = await server.app.database.query<{ metric: string; amount: number | string }>(
          "select metric, amount from quota_windows where metric in ('usd_day', 'usd_month') and subject_id = $1 order by metric",
          [user.keyId],
        );
        return rows.map((r) => `${r.metric} ${String(r.amount)}`);
      };
      const before = await counters();
      expect(before).toHaveLength(2);
      statements.length = 0;
      await server.app.usageLedger.flush();
      expect(statements).not.toContain('quota_spend_release');
      expect(await counters()).toEqual(before);
    } finally {
      for (const name of counted) client[name] = originals[name]!;
    }
  });
});
