// Anthropic's Messages API (issue 19, section 3) with the official @anthropic-ai/sdk over the real
// TLS listener: Anthropic served natively (its answer and events passed on), OpenAI and Gemini
// through translation, a tools round trip, messages.stream(), fallback between vendors, errors
// in Anthropic's shape, count_tokens.
import Anthropic from '@anthropic-ai/sdk';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startFakeAnthropic, startFakeGemini, startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { createUser, LogCapture, testConfig } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

const KEYS = { openai: 'sk-msg-openai-1111111111', anthropic: 'sk-ant-msg-2222222222', google: 'AIza-msg-3333333333', openrouter: 'sk-or-msg-4444444444' };
type Provider = keyof typeof KEYS;

let server: RunningServer;
let database: Database;
const fakes = {} as Record<'openai' | 'anthropic' | 'gemini' | 'openrouter', FakeVendor>;
const tls = new Agent({ connect: { rejectUnauthorized: false } });

beforeAll(async () => {
  fakes.openai = await startFakeOpenAI({ apiKey: KEYS.openai });
  fakes.anthropic = await startFakeAnthropic({ apiKey: KEYS.anthropic });
  fakes.gemini = await startFakeGemini({ apiKey: KEYS.google });
  fakes.openrouter = await startFakeOpenAI({ apiKey: KEYS.openrouter });
  database = await openTestDatabase();
  const config = testConfig({
    PORT: '0',
    PROVIDER_BASE_URL_OPENAI: fakes.openai.baseUrl,
    PROVIDER_BASE_URL_ANTHROPIC: fakes.anthropic.baseUrl,
    PROVIDER_BASE_URL_GOOGLE: fakes.gemini.baseUrl,
    PROVIDER_BASE_URL_OPENROUTER: fakes.openrouter.baseUrl,
  });
  server = await startServer(config, { logStream: new LogCapture(), database });
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

async function userWith(providers: Array<[Provider, number]>) {
  const user = await createUser(server.app);
  for (const [provider, priority] of providers) {
    const res = await server.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider, api_key: KEYS[provider], priority } });
    if (res.statusCode !== 201) throw new Error(res.body);
  }
  return user;
}

const sdk = (options: { apiKey?: string | null; authToken?: string }) =>
  new Anthropic({ ...options, baseURL: server.url, maxRetries: 0, timeout: 10_000, fetch: undiciFetch as unknown as typeof fetch, fetchOptions: { dispatcher: tls } as Record<string, unknown> });

async function clientFor(providers: Array<[Provider, number]>) {
  return sdk({ apiKey: (await userWith(providers)).key });
}

async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Anthropic.APIError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

const weather: Anthropic.Tool = { name: 'get_weather', description: 'Current weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

describe('messages.create', () => {
  it('anthropic: the request goes as it came (thinking, cache_control, top_k) and the answer comes back as Anthropic sent it', async () => {
    const client = await clientFor([['anthropic', 0]]);
    // top_k is no longer in the SDK's types; Anthropic's API still takes it.
    const params = {
      model: 'claude-sonnet-4-5',
      max_tokens: 2048,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      top_k: 5,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      metadata: { user_id: 'u-42' },
      output_config: { effort: 'high' },
    } as Anthropic.MessageCreateParamsNonStreaming;
    const { data: message, response } = await client.messages.create(params).withResponse();
    expect(fakes.anthropic.requests[0]!.body).toEqual(params);
    expect(message).toEqual({
      id: 'msg_fake_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'echo: Hello' }], stop_reason: 'end_turn', stop_sequence: null,
      usage: { input_tokens: 'Hello'.length, output_tokens: 'echo: Hello'.length },
    });
    expect(response.headers.get('x-ladder-provider')).toBe('anthropic');
    // Metered like chat: claude-sonnet-4-5 at $3 / $15 per million tokens.
    expect(response.headers.get('x-ladder-cost-usd')).toBe('0.000180000'); // (5 * 3 + 11 * 15) / 1e6 USD, exactly
  });

  it('anthropic-beta is passed on to Anthropic (the SDK’s beta.messages too); a malformed one is a 400', async () => {
    const user = await userWith([['anthropic', 0]]);
    const client = sdk({ apiKey: user.key });
    const message = await client.beta.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, betas: ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07'], messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'echo: Hi' }]);
    expect(fakes.anthropic.requests[0]!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14,context-1m-2025-08-07');
    const bad = await undiciFetch(`${server.url}/v1/messages`, {
      method: 'POST', dispatcher: tls,
      headers: { 'x-api-key': user.key, 'content-type': 'application/json', 'anthropic-beta': 'a;b=c' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-ladder-error-code')).toBe('invalid_header');
    expect(fakes.anthropic.requests).toHaveLength(1);
  });

  it('openai: translated to chat completions, and the answer to a Message', async () => {
    const client = await clientFor([['openai', 0]]);
    fakes.openai.script({ kind: 'reply', content: 'Bonjour !', usage: { prompt: 12, completion: 3 } });
    const message = await client.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 100,
      system: 'Answer in French.',
      messages: [{ role: 'user', content: 'Hello' }],
      stop_sequences: ['###'],
      metadata: { user_id: 'u-1' },
      ...({ temperature: 0.5 } as object),
    });
    expect(fakes.openai.requests[0]!.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'system', content: 'Answer in French.' }, { role: 'user', content: 'Hello' }],
      max_tokens: 100,
      stop: ['###'],
      temperature: 0.5,
      user: 'u-1',
    });
    expect(message).toMatchObject({
      type: 'message', role: 'assistant', model: 'gpt-4o-mini',
      content: [{ type: 'text', text: 'Bonjour !' }], stop_reason: 'end_turn', stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(message.id).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  it('a tools round trip on OpenAI: tool_use out, tool_result back as a tool message', async () => {
    const client = await clientFor([['openai', 0]]);
    fakes.openai.script({ kind: 'tool-call', calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] });
    const question: Anthropic.MessageParam = { role: 'user', content: 'Weather in Paris?' };
    const first = await client.messages.create({ model: 'gpt-4o-mini', max_tokens: 100, messages: [question], tools: [weather], tool_choice: { type: 'any', disable_parallel_tool_use: true } });
    expect(first.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }]);
    expect(first.stop_reason).toBe('tool_use');
    expect(fakes.openai.requests[0]!.body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Current weather in a city', parameters: weather.input_schema } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    fakes.openai.script({ kind: 'reply', content: 'It is 21 °C.' });
    const second = await client.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 100,
      tools: [weather],
      messages: [
        question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: '{"temp_c": 21}' }] }, { type: 'text', text: 'And tomorrow?' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'It is 21 °C.' }]);
    expect(fakes.openai.requests[1]!.body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c": 21}' },
      { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
    ]);
  });

  it('gemini: top_k becomes topK, thinking a thinking budget; a vendor without top_k is skipped', async () => {
    const client = await clientFor([['openrouter', 0], ['google', 1]]);
    const message = await client.messages.create({ model: 'gemini-2.5-flash', max_tokens: 50, thinking: { type: 'enabled', budget_tokens: 8000 }, messages: [{ role: 'user', content: 'Hi' }], ...({ top_k: 3 } as object) });
    expect(message.content).toEqual([{ type: 'text', text: 'echo: Hi' }]);
    expect(fakes.openrouter.requests).toHaveLength(0);
    expect(fakes.gemini.requests[0]!.body.generationConfig).toEqual({ maxOutputTokens: 50, thinkingConfig: { thinkingBudget: 8192 }, topK: 3 });
  });

  it('falls back from Anthropic to the next vendor, which gets the request translated', async () => {
    const user = await userWith([['anthropic', 0], ['openrouter', 1]]);
    fakes.anthropic.script({ kind: 'error', status: 529 });
    const { data: message, response } = await sdk({ apiKey: user.key }).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
    expect(message.content).toEqual([{ type: 'text', text: 'echo: Hello' }]);
    expect(response.headers.get('x-ladder-attempts')).toBe('anthropic;status=529;reason=server_error, openrouter;status=200');
    expect(fakes.openrouter.requests[0]!.body).toEqual({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 64 });
  });

  it('what only Anthropic takes (a server tool) skips the other vendors', async () => {
    const client = await clientFor([['openrouter', 0]]);
    const error = await apiError(client.messages.create({
      model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Search' }],
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 1 }],
    }));
    expect(error.status).toBe(400);
    expect(error.error).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: "openrouter: cannot take this Messages request (tools[0] is Anthropic's server tool web_search_20250305); only Anthropic can." },
      request_id: expect.any(String),
    });
    expect(fakes.openrouter.requests).toHaveLength(0);
  });
});

describe('errors in Anthropic’s shape, auth by x-api-key or Bearer', () => {
  it('a wrong key is 401 authentication_error; Authorization: Bearer works as well as x-api-key', async () => {
    const error = await apiError(sdk({ apiKey: 'ldr-not-a-key' }).messages.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }));
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((error.error as { error: { type: string } }).error.type).toBe('authentication_error');
    const user = await userWith([['openai', 0]]);
    const bearer = await sdk({ apiKey: null, authToken: user.key }).messages.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    expect(bearer.content).toEqual([{ type: 'text', text: 'echo: x' }]);
  });

  it('a bad request is 400 invalid_request_error, with our code in x-ladder-error-code; an unserved model 404 not_found_error', async () => {
    const user = await userWith([['openai', 0]]);
    const missing = await fetchMessages(user.key, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    expect(missing.status).toBe(400);
    expect(missing.headers.get('x-ladder-error-code')).toBe('missing_required_field');
    expect(await missing.json() as unknown).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'Missing required field: max_tokens.' }, request_id: expect.any(String) });
    const unserved = await apiError(sdk({ apiKey: user.key }).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }));
    expect(unserved.status).toBe(404);
    expect(unserved.headers?.get('x-ladder-error-code')).toBe('model_not_found');
    expect((unserved.error as { error: { type: string } }).error.type).toBe('not_found_error');
  });

  it('every vendor failing is 502 api_error; other routes keep the Error envelope', async () => {
    const user = await userWith([['openai', 0]]);
    fakes.openai.script({ kind: 'error', status: 500 });
    const failed = await fetchMessages(user.key, { model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    expect(failed.status).toBe(502);
    expect(await failed.json()).toEqual({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('All providers failed: openai (HTTP 500') }, request_id: expect.any(String) });
    const chat = await undiciFetch(`${server.url}/v1/chat/completions`, { method: 'POST', dispatcher: tls, headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' }, body: '{}' });
    expect((await chat.json() as { error: { code: string } }).error.code).toBe('missing_required_field');
  });
});

describe('messages.stream()', () => {
  it('openai: chat chunks become Anthropic’s event sequence, and the SDK assembles the message (text and a tool call)', async () => {
    const client = await clientFor([['openai', 0]]);
    fakes.openai.script({ kind: 'tool-call', content: 'Let me check.', calls: [{ id: 'call_9', name: 'get_weather', arguments: { city: 'Paris' } }] });
    const stream = client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 100, tools: [weather], messages: [{ role: 'user', content: 'Weather?' }] });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: 'call_9', name: 'get_weather', input: { city: 'Paris' } }]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage.output_tokens).toBe(1);
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(2);
    expect(types.filter((t) => t === 'content_block_stop')).toHaveLength(2);

    // The usage comes with message_delta (chat vendors report it at the end), which the SDK takes.
    fakes.openai.script({ kind: 'reply', content: 'Fine.', usage: { prompt: 12, completion: 3 } });
    const counted = await client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user', content: 'How are you?' }] }).finalMessage();
    expect(counted.usage).toMatchObject({ input_tokens: 12, output_tokens: 3 });
    expect(counted.content).toEqual([{ type: 'text', text: 'Fine.' }]);
  });

  it('gemini: its stream becomes Anthropic’s events too', async () => {
    const user = await userWith([['google', 0]]);
    fakes.gemini.script({ kind: 'tool-call', calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const stream = sdk({ apiKey: user.key }).messages.stream({ model: 'gemini-2.5-flash', max_tokens: 100, tools: [weather], messages: [{ role: 'user', content: 'Weather?' }] });
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^call_/), name: 'get_weather', input: { city: 'Oslo' } }]);
    expect(message.stop_reason).toBe('tool_use');
    expect(fakes.gemini.requests[0]!.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    const res = await fetchMessages(user.key, { model: 'gemini-2.5-flash', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.headers.get('x-ladder-provider')).toBe('google');
    const events = (await res.text()).trim().split('\n\n').map((e) => e.split('\n')[0]!.slice('event: '.length));
    expect(events).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  });

  it('anthropic: its own events are relayed as they came', async () => {
    const user = await userWith([['anthropic', 0]]);
    const res = await fetchMessages(user.key, { model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hello' }] });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const text = await res.text();
    const fakeText = await undiciFetch(`${fakes.anthropic.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEYS.anthropic, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hello' }] }),
    }).then((r) => r.text());
    expect(text.replace(/msg_fake_\d+/, 'msg_fake_N')).toBe(fakeText.replace(/msg_fake_\d+/, 'msg_fake_N'));
    expect(fakes.anthropic.requests[0]!.body).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hello' }] });

    const sdkStream = sdk({ apiKey: user.key }).messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    expect(await sdkStream.finalText()).toBe('echo: Hi');
  });

  it('a vendor failing after the first chunk ends the stream with an error event, no message_stop', async () => {
    const user = await userWith([['openai', 0]]);
    fakes.openai.script({ kind: 'stream-error', after: 2 });
    const res = await fetchMessages(user.key, { model: 'gpt-4o-mini', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hello there' }] });
    const text = await res.text();
    expect(text).toContain('event: message_start');
    expect(text).not.toContain('message_stop');
    const last = text.trim().split('\n\n').pop()!;
    expect(last.split('\n')[0]).toBe('event: error');
    expect(JSON.parse(last.split('\n')[1]!.slice('data: '.length))).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: expect.stringContaining('The stream was cut before the answer was complete') },
      request_id: null,
    });
  });
});

describe('POST /v1/messages/count_tokens', () => {
  it('anthropic counts; a model served only by vendors that cannot count is a clear 400', async () => {
    const client = await clientFor([['anthropic', 0], ['openai', 1]]);
    const counted = await client.messages.countTokens({ model: 'claude-sonnet-4-5', system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }], tools: [weather] }, { headers: { 'anthropic-beta': 'token-counting-2024-11-01' } });
    expect(fakes.anthropic.requests[0]!.headers['anthropic-beta']).toBe('token-counting-2024-11-01');
    expect(counted).toEqual({ input_tokens: 'Be brief.'.length + 'Hello'.length + 'get_weather'.length });
    expect(fakes.anthropic.requests[0]!.path).toBe('/v1/messages/count_tokens');
    const error = await apiError(client.messages.countTokens({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] }));
    expect(error.status).toBe(400);
    expect(error.headers?.get('x-ladder-error-code')).toBe('token_counting_not_supported');
    expect((error.error as { error: { message: string } }).error.message).toBe('Model "gpt-4o-mini" is served by openai, which cannot count tokens without running the request; token counting needs a connection to a vendor that offers it (anthropic).');
  });
});

describe('routing', () => {
  it('wrong methods are 405; `messages` cannot be a username', async () => {
    const get = await server.app.inject({ method: 'GET', url: '/v1/messages' });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe('POST');
    const count = await server.app.inject({ method: 'GET', url: '/v1/messages/count_tokens' });
    expect(count.statusCode).toBe(405);
    // Paths under /v1/messages are ours, never a ladder of an author named "messages".
    for (const [method, url] of [['GET', '/v1/messages/x'], ['POST', '/v1/messages/x/chat/completions']] as const) {
      const res = await server.app.inject({ method, url });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('unknown_route');
    }
    const reserved = await server.app.inject({ method: 'POST', url: '/v1/admin/accounts', headers: { authorization: 'Bearer test-admin-token-0123456789' }, payload: { username: 'messages' } });
    expect(reserved.json().error).toMatchObject({ code: 'reserved_username' });
  });
});

function fetchMessages(key: string, body: unknown) {
  return undiciFetch(`${server.url}/v1/messages`, {
    method: 'POST',
    dispatcher: tls,
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}
