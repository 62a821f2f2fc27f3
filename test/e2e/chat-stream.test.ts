// Streamed direct chat completions end to end (issue 21): the official openai client over the
// real TLS listener, fake vendors streaming in their own wire formats on real sockets.
import { connect as tlsConnect } from 'node:tls';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startFakeAnthropic, startFakeAzure, startFakeGemini, startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { createUser, LogCapture, testConfig } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

const KEYS = { openai: 'sk-stream-openai-1111111111', openrouter: 'sk-or-stream-2222222222', anthropic: 'sk-ant-stream-3333333333', google: 'AIza-stream-4444444444', azure: 'azure-stream-5555555555' };
const CHAT_ID = /^ldr-chat-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let server: RunningServer;
let database: Database;
const logs = new LogCapture();
const fakes = {} as Record<'openai' | 'openrouter' | 'anthropic' | 'gemini' | 'azure', FakeVendor>;
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
    PROVIDER_BASE_URL_OPENAI: fakes.openai.baseUrl,
    PROVIDER_BASE_URL_OPENROUTER: fakes.openrouter.baseUrl,
    PROVIDER_BASE_URL_ANTHROPIC: fakes.anthropic.baseUrl,
    PROVIDER_BASE_URL_GOOGLE: fakes.gemini.baseUrl,
    ALLOW_PRIVATE_ENDPOINTS: 'true',
    BREAKER_FAILURE_THRESHOLD: '1',
    BREAKER_COOLDOWN_MS: '600000',
    STREAM_FIRST_BYTE_TIMEOUT_MS: '2000',
    STREAM_IDLE_TIMEOUT_MS: '400',
    USAGE_FLUSH_MS: '600000',
    WORKER_CONCURRENCY: '0',
    METRICS_TOKEN: 'stream-e2e-metrics-token-0123',
  });
  server = await startServer(config, { logStream: logs, database });
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

type Connection = { provider: string; api_key: string; priority?: number; endpoint?: string };
const openai = (priority = 0): Connection => ({ provider: 'openai', api_key: KEYS.openai, priority });
const openrouter = (priority = 10): Connection => ({ provider: 'openrouter', api_key: KEYS.openrouter, priority });

async function account(connections: Connection[]) {
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

/** A raw streamed call: status, headers and the body's text as sent. */
async function rawStream(key: string, body: unknown) {
  const res = await request(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    dispatcher: tls,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** The `data:` payloads of an event-stream text. */
const dataOf = (text: string) => text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));

async function ledgerRows(accountId: string) {
  await server.app.usageLedger.flush();
  return database.query<Record<string, any>>('select provider, model, prompt_tokens, completion_tokens, total_tokens, cost_nanos::float8 as cost_nanos, outcome from usage_records where account_id = $1 order by id', [accountId]);
}

async function until(check: () => boolean, ms = 3000): Promise<void> {
  for (const start = Date.now(); !check(); ) {
    if (Date.now() - start > ms) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const hello = [{ role: 'user' as const, content: 'Hello there' }];

describe('OpenAI-compatible streams', () => {
  it('for await over create({stream: true}): the chunks OpenAI sends, with our id and the requested model', async () => {
    const { client } = await account([openai()]);
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello, stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('echo: Hello there');
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0]!.id).toMatch(CHAT_ID);
    for (const c of chunks) {
      expect(c.object).toBe('chat.completion.chunk');
      expect(c.model).toBe('gpt-4o-mini');
      expect(c.system_fingerprint).toBe('fp_fake');
      // The client did not ask for usage: neither the usage chunk nor `usage: null` members reach it.
      expect('usage' in c).toBe(false);
    }
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    // Upstream is always asked for usage, so the call can be metered.
    expect(fakes.openai.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true }, model: 'gpt-4o-mini' });
  });

  it('the wire: text/event-stream, routing headers, and data: [DONE] last; include_usage adds the exact usage chunk', async () => {
    const user = await account([openai()]);
    const res = await rawStream(user.key, { model: 'gpt-4o-mini', messages: hello, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['x-ladder-provider']).toBe('openai');
    expect(res.headers['x-ladder-attempts']).toBe('openai;status=200');
    expect(res.headers['x-ladder-model']).toBe('gpt-4o-mini');
    const data = dataOf(res.text);
    expect(data.at(-1)).toBe('[DONE]');
    const usageChunk = JSON.parse(data.at(-2)!);
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual({
      prompt_tokens: 'Hello there'.length,
      completion_tokens: 'echo: Hello there'.length,
      total_tokens: 'Hello there'.length + 'echo: Hello there'.length,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    const rows = await ledgerRows(user.id);
    expect(rows).toEqual([expect.objectContaining({ provider: 'openai', model: 'gpt-4o-mini', prompt_tokens: 11, completion_tokens: 17, total_tokens: 28, outcome: 'ok' })]);
    expect(rows[0]!.cost_nanos).toBe(11 * 150 + 17 * 600);
  });

  it('chat.completions.stream(): finalChatCompletion() assembles the tool calls', async () => {
    const { client } = await account([openai()]);
    fakes.openai.script({ kind: 'tool-call', calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris', unit: 'c' } }, { name: 'get_time', arguments: { tz: 'CET' } }] });
    const stream = client.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: hello,
      tools: [
        { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
      ],
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' } },
      { id: expect.stringMatching(/^call_fake_/), type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
    ]);
  });

  it('n > 1: choices by index', async () => {
    const { client } = await account([openai()]);
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello, n: 2, stream: true });
    const texts = ['', ''];
    for await (const chunk of stream) for (const c of chunk.choices) texts[c.index] += c.delta.content ?? '';
    expect(texts).toEqual(['echo: Hello there', 'echo: Hello there']);
  });

  it('Azure and custom endpoints stream through the same relay', async () => {
    const { client } = await account([
      { provider: 'azure-openai', api_key: KEYS.azure, endpoint: fakes.azure.url, priority: 0 },
    ]);
    const stream = await client.chat.completions.create({ model: 'my-deployment', messages: hello, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('echo: Hello there');
    expect(fakes.azure.requests[0]!.path).toBe('/openai/deployments/my-deployment/chat/completions');
    const custom = await account([{ provider: 'custom', api_key: KEYS.openai, endpoint: fakes.openai.baseUrl }]);
    const again = await custom.client.chat.completions.create({ model: 'local-model', messages: hello, stream: true });
    text = '';
    for await (const chunk of again) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('echo: Hello there');
  });
});

describe('failures', () => {
  it('before the first byte, a failing candidate falls back; the attempts header says so', async () => {
    const user = await account([openai(0), openrouter(10)]);
    fakes.openai.script({ kind: 'error', status: 500 });
    const { data, response } = await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello, stream: true }).withResponse();
    let text = '';
    for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('echo: Hello there');
    expect(response.headers.get('x-ladder-attempts')).toBe('openai;status=500;reason=server_error, openrouter;status=200');
    expect(response.headers.get('x-ladder-provider')).toBe('openrouter');
  });

  it('a vendor dying before its first event falls back too', async () => {
    const user = await account([openai(0), openrouter(10)]);
    fakes.openai.script({ kind: 'stream-die', after: 0 });
    const res = await rawStream(user.key, { model: 'gpt-4o-mini', messages: hello, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers['x-ladder-attempts']).toBe('openai;reason=connection_error, openrouter;status=200');
    expect(dataOf(res.text).at(-1)).toBe('[DONE]');
  });

  it("the last chunks reach the client when the vendor sends [DONE], not when it closes the body; [DONE] follows the close", async () => {
    const user = await account([openai(0)]);
    let close!: () => void;
    fakes.openai.script({ kind: 'stream-linger', until: new Promise<void>((resolve) => (close = resolve)) });
    const res = await request(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      dispatcher: tls,
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: hello, stream: true }),
    });
    let text = '';
    let finishBeforeClose = false;
    for await (const part of res.body) {
      text += (part as Buffer).toString('utf8');
      // Held back until the vendor closed, the finish would never come: the vendor waits for it.
      if (!finishBeforeClose && text.includes('"finish_reason":"stop"')) {
        finishBeforeClose = !text.includes('[DONE]');
        close();
      }
    }
    expect(finishBeforeClose).toBe(true);
    expect(dataOf(text).at(-1)).toBe('[DONE]');
  });

  it('errors found before streaming stay plain JSON answers', async () => {
    const user = await account([openai(0)]);
    fakes.openai.script({ kind: 'error', status: 400, message: 'bad thing' });
    const res = await rawStream(user.key, { model: 'gpt-4o-mini', messages: hello, stream: true });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.text).error.code).toBe('provider_rejected_request');
    const none = await rawStream(user.key, { model: 'claude-sonnet-4-5', messages: hello, stream: true });
    expect(none.status).toBe(404);
    expect(none.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(none.text).error.code).toBe('model_not_found');
  });

  it('a vendor dying mid-stream: one error event, no [DONE]; the SDK raises', async () => {
    const user = await account([openai(0), openrouter(10)]);
    fakes.openai.script({ kind: 'stream-die', after: 3 });
    const res = await rawStream(user.key, { model: 'gpt-4o-mini', messages: hello, stream: true });
    expect(res.status).toBe(200);
    const data = dataOf(res.text);
    expect(data).not.toContain('[DONE]');
    expect(JSON.parse(data.at(-1)!)).toEqual({
      error: { message: expect.stringContaining('openai: the stream was cut before the answer was complete'), type: 'upstream_error', code: 'upstream_stream_interrupted', param: null },
    });
    expect(fakes.openrouter.requests).toHaveLength(0);

    fakes.openai.script({ kind: 'stream-die', after: 3 });
    const stream = await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello, stream: true });
    let text = '';
    const failure = await (async () => {
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_stream_interrupted');
    expect(text).toBe('echo: He');
  });

  it("a vendor's in-stream error event, a malformed event and an idle vendor each end the stream with the error event", async () => {
    const user = await account([openai(0)]);
    const cases = [
      [{ kind: 'stream-error', after: 2, message: 'overloaded, sorry' }, 'upstream_stream_error', 'openai: the stream reported an error: overloaded, sorry'],
      [{ kind: 'stream-malformed', after: 2 }, 'upstream_stream_interrupted', 'openai: unreadable stream event'],
      [{ kind: 'stream-slow', intervalMs: 1500, content: 'slow answer' }, 'stream_timeout', 'openai: the stream was idle for 400 ms'],
    ] as const;
    for (const [step, code, message] of cases) {
      // The slow case's first event also comes late: it is what a first-byte limit allows.
      fakes.openai.script(step as never);
      const res = await rawStream(user.key, { model: 'gpt-4o-mini', messages: hello, stream: true });
      const data = dataOf(res.text);
      expect(data, res.text).not.toContain('[DONE]');
      expect(data.length, `${code}: ${res.status} ${res.text}`).toBeGreaterThan(1);
      const last = JSON.parse(data.at(-1)!);
      expect(last.error.code).toBe(code);
      expect(last.error.message).toContain(message);
    }
  });

  it('a client that leaves closes the vendor connection within a second, and the call is still metered', async () => {
    const user = await account([openai(0)]);
    fakes.openai.script({ kind: 'stream-long', chunks: 1000, intervalMs: 20 });
    const controller = new AbortController();
    const stream = await user.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hello, stream: true }, { signal: controller.signal });
    let seen = 0;
    try {
      for await (const chunk of stream) {
        seen += chunk.choices[0]?.delta.content?.length ?? 0;
        if (seen >= 20) controller.abort();
      }
    } catch {
      // the SDK's abort error
    }
    const abortedAt = Date.now();
    await until(() => fakes.openai.requests[0]!.clientClosed);
    expect(fakes.openai.requests[0]!.abortedAt! - abortedAt).toBeLessThan(1000);
    await until(() => false, 50).catch(() => {});
    const rows = await ledgerRows(user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ provider: 'openai', outcome: 'client_closed_request' });
    // Cut before the vendor's usage report: the prompt and what was relayed are charged, estimated.
    expect(rows[0]!.prompt_tokens).toBe(Math.ceil('Hello there'.length / 4));
    expect(rows[0]!.completion_tokens).toBeGreaterThanOrEqual(5);
    expect(rows[0]!.cost_nanos).toBeGreaterThan(0);
  });

  it('a client that does not read stalls the vendor read: a bounded number of events leave the vendor', async () => {
    const user = await account([openai(0)]);
    // Some 55 MB of events, far more than the kernel's socket buffers hold between the client, the
    // service and the vendor: 30,000-35,000 events (about 6 MB) leave before the stall on the 2-core
    // machine, and 100,000 left too little margin under load (their size grows with tcp_rmem/wmem autotuning).
    const total = 300_000;
    fakes.openai.script({ kind: 'stream-long', chunks: total });
    const url = new URL(server.url);
    const payload = JSON.stringify({ model: 'gpt-4o-mini', messages: hello, stream: true });
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false });
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${user.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`);
    // Never read: the socket is paused from the start.
    socket.pause();
    await until(() => (fakes.openai.requests[0]?.streamedEvents ?? 0) > 0);
    let before = -1;
    for (let i = 0; i < 50 && fakes.openai.requests[0]!.streamedEvents !== before; i++) {
      before = fakes.openai.requests[0]!.streamedEvents;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const stalled = fakes.openai.requests[0]!.streamedEvents;
    expect(stalled).toBe(before);
    expect(stalled).toBeLessThan(total / 2);
    socket.destroy();
    await until(() => fakes.openai.requests[0]!.clientClosed);
  });
});

describe('Anthropic and Gemini streams, translated to the same chunks', () => {
  const anthropic = (): Connection => ({ provider: 'anthropic', api_key: KEYS.anthropic });
  const google = (): Connection => ({ provider: 'google', api_key: KEYS.google });
  const tools = [
    { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } },
    { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object' } } },
  ];
  const calls = [{ id: 'call_w', name: 'get_weather', arguments: { city: 'Paris' } }, { id: 'call_t', name: 'get_time', arguments: { tz: 'CET', long: 'x'.repeat(30) } }];

  for (const [vendor, connection, model] of [['anthropic', anthropic, 'claude-sonnet-4-5'], ['gemini', google, 'gemini-2.5-flash']] as const) {
    it(`${vendor}: text chunks, role first, the finish, and exact usage when asked`, async () => {
      const user = await account([connection()]);
      const stream = await user.client.chat.completions.create({ model, messages: hello, stream: true, stream_options: { include_usage: true } });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('echo: Hello there');
      expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(2);
      for (const c of chunks) expect(c).toMatchObject({ id: chunks[0]!.id, object: 'chat.completion.chunk', model });
      expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
      expect(chunks.at(-1)!.choices).toEqual([]);
      expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 11, completion_tokens: 17, total_tokens: 28 });
      const rows = await ledgerRows(user.id);
      expect(rows).toEqual([expect.objectContaining({ provider: vendor === 'gemini' ? 'google' : 'anthropic', prompt_tokens: 11, completion_tokens: 17, outcome: 'ok' })]);
    });

    it(`${vendor}: chat.completions.stream() assembles tool calls`, async () => {
      const user = await account([connection()]);
      fakes[vendor].script({ kind: 'tool-call', calls });
      const final = await user.client.chat.completions.stream({ model, messages: hello, tools }).finalChatCompletion();
      expect(final.choices[0]!.finish_reason).toBe('tool_calls');
      expect(final.choices[0]!.message.tool_calls).toEqual([
        { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_t', type: 'function', function: { name: 'get_time', arguments: JSON.stringify(calls[1]!.arguments) } },
      ]);
    });

    it(`${vendor}: a vendor failing mid-stream makes the SDK raise`, async () => {
      const user = await account([connection()]);
      fakes[vendor].script({ kind: 'stream-error', after: 3, message: 'Overloaded' });
      const stream = await user.client.chat.completions.create({ model, messages: hello, stream: true });
      const failure = await (async () => {
        try {
          for await (const chunk of stream) void chunk;
        } catch (error) {
          return error;
        }
        return null;
      })();
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect((failure as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_stream_error');
      expect((failure as Error).message).toContain('the stream reported an error: Overloaded');
      fakes[vendor].script({ kind: 'stream-die', after: 3 });
      const res = await rawStream(user.key, { model, messages: hello, stream: true });
      expect(JSON.parse(dataOf(res.text).at(-1)!).error.code).toBe('upstream_stream_interrupted');
    });
  }

  it('the vendors are asked in their own stream form', async () => {
    const user = await account([anthropic()]);
    await rawStream(user.key, { model: 'claude-sonnet-4-5', messages: hello, stream: true });
    expect(fakes.anthropic.requests[0]!.body.stream).toBe(true);
    const g = await account([google()]);
    await rawStream(g.key, { model: 'gemini-2.5-flash', messages: hello, stream: true });
    expect(fakes.gemini.requests[0]!.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(fakes.gemini.requests[0]!.query).toEqual({ alt: 'sse' });
  });
});

describe('metrics', () => {
  it('time to first chunk is observed per provider, every stream that started is counted by outcome, and as an answered request', async () => {
    const scrape = async () => server.app.metrics.scrape();
    const value = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}"+]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    const before = await scrape();
    const user = await account([openai(0)]);
    await rawStream(user.key, { model: 'gpt-4o-mini', messages: hello, stream: true });
    fakes.openai.script({ kind: 'stream-die', after: 3 });
    await rawStream(user.key, { model: 'gpt-4o-mini', messages: hello, stream: true });
    await until(() => false, 100).catch(() => {});
    const after = await scrape();
    const delta = (series: string) => value(after, series) - value(before, series);
    expect(delta('ladder_streams_total{outcome="completed"}')).toBe(1);
    expect(delta('ladder_streams_total{outcome="upstream_error"}')).toBe(1);
    expect(delta('ladder_stream_first_chunk_seconds_count{provider="openai"}')).toBe(2);
    // Written straight to the response, a stream is still an answered request to fastify's onResponse hooks.
    expect(delta('ladder_http_requests_total{method="POST",route="/v1/chat/completions",status="200"}')).toBe(2);
  });
});
