// POST /v1/chat/completions through app.inject: request validation, and the rules that need
// a particular stored state (endpoints refused at call time, keys in vendor error text).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/client.js';
import { PRIVATE_ENDPOINTS_ADVICE } from '../../src/providers/ssrf.js';
import { startFakeGemini, startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, type TestApp } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

type Headers = Record<string, string>;
const OPENAI_KEY = 'sk-route-openai-SECRET-0123456789';

function chat(app: FastifyInstance, headers: Headers, payload: unknown) {
  return app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: payload as object });
}
function connect(app: FastifyInstance, headers: Headers, payload: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: '/v1/providers', headers, payload });
}

const hello = [{ role: 'user', content: 'Hello' }];

describe('chat completions: request validation', () => {
  let testApp: TestApp;
  let fake: FakeVendor;
  let headers: Headers;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: OPENAI_KEY });
    testApp = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl });
    ({ headers } = await createUser(testApp.app));
    expect((await connect(testApp.app, headers, { provider: 'openai', api_key: OPENAI_KEY })).statusCode).toBe(201);
  });
  afterAll(async () => {
    await testApp.close();
    await fake.close();
  });
  afterEach(() => {
    // Nothing the service refuses may reach the vendor.
    expect(fake.requests).toEqual([]);
    fake.reset();
  });

  const refused: Array<[string, unknown, string, string]> = [
    ['no model', { messages: hello }, 'missing_required_field', 'model'],
    ['no messages', { model: 'gpt-4o-mini' }, 'missing_required_field', 'messages'],
    ['an empty model', { model: '', messages: hello }, 'invalid_value', 'model'],
    ['a model that is not a string', { model: 4, messages: hello }, 'invalid_type', 'model'],
    ['empty messages', { model: 'gpt-4o-mini', messages: [] }, 'invalid_value', 'messages'],
    ['messages that are not an array', { model: 'gpt-4o-mini', messages: 'Hello' }, 'invalid_type', 'messages'],
    ['a message without role', { model: 'gpt-4o-mini', messages: [{ content: 'Hello' }] }, 'missing_required_field', 'messages[0].role'],
    ['a message without content', { model: 'gpt-4o-mini', messages: [{ role: 'user' }] }, 'missing_required_field', 'messages[0].content'],
    ['an unknown role', { model: 'gpt-4o-mini', messages: [...hello, { role: 'bot', content: 'x' }] }, 'invalid_value', 'messages[1].role'],
    ['a tool message without tool_call_id', { model: 'gpt-4o-mini', messages: [...hello, { role: 'tool', content: 'x' }] }, 'missing_required_field', 'messages[1].tool_call_id'],
    ['tool_call_id on a user message', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x', tool_call_id: 'c' }] }, 'unknown_parameter', 'messages[0].tool_call_id'],
    ['null content on an assistant message without tool calls', { model: 'gpt-4o-mini', messages: [...hello, { role: 'assistant', content: null }] }, 'invalid_value', 'messages[1].content'],
    ['an image in a system message', { model: 'gpt-4o-mini', messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }, ...hello] }, 'invalid_value', 'messages[0].content[0]'],
    ['an unknown member in a message', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x', foo: 1 }] }, 'unknown_parameter', 'messages[0].foo'],
    ['an unknown top-level member', { model: 'gpt-4o-mini', messages: hello, foo: 1 }, 'unknown_parameter', 'foo'],
    ['n above 128', { model: 'gpt-4o-mini', messages: hello, n: 129 }, 'invalid_value', 'n'],
    ['top_p above 1', { model: 'gpt-4o-mini', messages: hello, top_p: 1.5 }, 'invalid_value', 'top_p'],
    ['five stop sequences', { model: 'gpt-4o-mini', messages: hello, stop: ['a', 'b', 'c', 'd', 'e'] }, 'invalid_value', 'stop'],
    ['presence_penalty below -2', { model: 'gpt-4o-mini', messages: hello, presence_penalty: -3 }, 'invalid_value', 'presence_penalty'],
    ['a logit_bias above 100', { model: 'gpt-4o-mini', messages: hello, logit_bias: { '50256': 101 } }, 'invalid_value', 'logit_bias[50256]'],
    ['a logit_bias key that is no token id', { model: 'gpt-4o-mini', messages: hello, logit_bias: { abc: 1 } }, 'unknown_parameter', 'logit_bias.abc'],
    ['an unknown reasoning_effort', { model: 'gpt-4o-mini', messages: hello, reasoning_effort: 'extreme' }, 'invalid_value', 'reasoning_effort'],
    ['an unknown response_format type', { model: 'gpt-4o-mini', messages: hello, response_format: { type: 'yaml' } }, 'invalid_value', 'response_format'],
    ['a tool without a function name', { model: 'gpt-4o-mini', messages: hello, tools: [{ type: 'function', function: {} }] }, 'invalid_value', 'tools[0]'],
    ['top_logprobs 21', { model: 'gpt-4o-mini', messages: hello, logprobs: true, top_logprobs: 21 }, 'invalid_value', 'top_logprobs'],
    ['a seed that is not an integer', { model: 'gpt-4o-mini', messages: hello, seed: 1.5 }, 'invalid_type', 'seed'],
    ['null content', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: null }] }, 'invalid_value', 'messages[0].content'],
    ['an empty content part list', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: [] }] }, 'invalid_value', 'messages[0].content'],
    [
      'an unknown content part',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: [{ type: 'audio', data: 'x' }] }] },
      'invalid_value',
      'messages[0].content[0]',
    ],
    ['no user message', { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }] }, 'missing_user_message', 'messages'],
    ['temperature above 2', { model: 'gpt-4o-mini', messages: hello, temperature: 2.5 }, 'invalid_value', 'temperature'],
    ['a temperature string', { model: 'gpt-4o-mini', messages: hello, temperature: '0.5' }, 'invalid_type', 'temperature'],
    ['max_tokens 0', { model: 'gpt-4o-mini', messages: hello, max_tokens: 0 }, 'invalid_value', 'max_tokens'],
    ['fractional max_tokens', { model: 'gpt-4o-mini', messages: hello, max_tokens: 1.5 }, 'invalid_type', 'max_tokens'],
    // Refused before any vendor is asked, as plain JSON, streamed or not.
    ['stream: true without a user message', { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'x' }], stream: true }, 'missing_user_message', 'messages'],
    ['stream: "true"', { model: 'gpt-4o-mini', messages: hello, stream: 'true' }, 'invalid_type', 'stream'],
  ];
  for (const [what, payload, code, param] of refused) {
    it(`refuses ${what}: 400 ${code} naming ${param}`, async () => {
      const res = await chat(testApp.app, headers, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ type: 'invalid_request_error', param, code });
      expect(res.json().error.message).toEqual(expect.any(String));
    });
  }

  it.each([
    [[{ role: 'bot', content: 'x' }], 'messages[0].role must be one of: "developer", "system", "user", "assistant", "tool", "function".'],
    [[{ role: 'user', content: [] }], 'messages[0].content must be a string or a non-empty array of content parts.'],
    [
      [{ role: 'user', content: [{ type: 'audio' }] }],
      'messages[0].content[0] must be a content part: {type: "text", text}, {type: "image_url", image_url: {url}}, {type: "input_audio", input_audio: {data, format}}, {type: "file", file: {...}} or {type: "refusal", refusal}.',
    ],
  ])('says what a message field accepts: %j', async (messages, message) => {
    const res = await chat(testApp.app, headers, { model: 'gpt-4o-mini', messages });
    expect(res.json().error.message).toBe(message);
  });

  it('refuses a body that is not JSON', async () => {
    const res = await testApp.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{"model": "gpt-4o-mini", ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_json');
  });

  it('a model naming a provider without a connection is 404 model_not_found and says which provider it selects', async () => {
    const res = await chat(testApp.app, headers, { model: 'anthropic/claude-3-5-haiku-latest', messages: hello });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toEqual({
      message:
        'Model "anthropic/claude-3-5-haiku-latest" is not served by any of your provider connections: it selects provider "anthropic", which has no connection (configured: openai).',
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
    });
  });

  it('passes every OpenAI parameter on unchanged, dropping only null members and stream', async () => {
    const res = await chat(testApp.app, headers, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hello', name: 'alice' }],
      top_p: 0.9,
      user: 'end-user-1',
      seed: 7,
      stop: null,
      stream: false,
      // enum members whose null is an enum value in the schema (OpenAPI 3.0 nullable enums)
      reasoning_effort: null,
      service_tier: null,
      verbosity: null,
      prompt_cache_retention: null,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().choices[0].message.content).toBe('echo: Hello');
    expect(fake.requests.map((r) => r.body)).toEqual([
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello', name: 'alice' }], top_p: 0.9, user: 'end-user-1', seed: 7 },
    ]);
    fake.reset();
  });

  it('the last user message is the prompt, after an assistant turn too', async () => {
    const res = await chat(testApp.app, headers, {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'second' },
        { role: 'assistant', content: 'prefill' },
      ],
    });
    expect(res.json().choices[0].message.content).toBe('echo: second');
    fake.reset();
  });
});

describe('chat completions: what stored state can do at call time', () => {
  let database: Database;
  let fake: FakeVendor;
  let gemini: FakeVendor;
  const apps: TestApp[] = [];
  const open = async (env: Record<string, string>) => {
    const testApp = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl, PROVIDER_BASE_URL_GOOGLE: gemini.baseUrl, ...env }, { database });
    apps.push(testApp);
    return testApp;
  };

  beforeAll(async () => {
    database = await openTestDatabase();
    fake = await startFakeOpenAI({ apiKey: OPENAI_KEY });
    gemini = await startFakeGemini({ apiKey: 'AIza-route-SECRET-000000' });
  });
  afterEach(async () => {
    for (const testApp of apps.splice(0)) await testApp.close();
    fake.reset();
    gemini.reset();
  });
  afterAll(async () => {
    await fake.close();
    await gemini.close();
    await database.close();
  });

  for (const [what, endpoint] of [
    ['a loopback IP', (url: string) => `${url}/v1`],
    ['a name that resolves to loopback', (url: string) => `${url.replace('http://127.0.0.1', 'https://localhost')}/v1`],
  ] as const) {
    it(`a custom endpoint saved while private endpoints were allowed is refused at call time (${what})`, async () => {
      const permissive = await open({ ALLOW_PRIVATE_ENDPOINTS: 'true' });
      const { headers } = await createUser(permissive.app);
      const saved = await connect(permissive.app, headers, { provider: 'custom', api_key: OPENAI_KEY, endpoint: endpoint(fake.url) });
      expect(saved.statusCode).toBe(201);

      const strict = await open({ ALLOW_PRIVATE_ENDPOINTS: 'false' });
      const res = await chat(strict.app, headers, { model: 'llama3.2', messages: hello });
      expect(res.statusCode).toBe(502);
      expect(res.json().error).toEqual({
        message:
          'All providers failed: custom (endpoint_not_allowed). The endpoint of custom is a loopback, private, link-local or metadata address ' +
          `or uses plain http, refused because ${PRIVATE_ENDPOINTS_ADVICE}`,
        type: 'upstream_error',
        code: 'upstream_unavailable',
        param: null,
      });
      expect(res.headers['x-ladder-attempts']).toBe('custom;reason=endpoint_not_allowed');
      expect(fake.requests).toEqual([]);
    });
  }

  it('a vendor error that quotes the provider key is returned without the key', async () => {
    const testApp = await open({});
    const { headers } = await createUser(testApp.app);
    await connect(testApp.app, headers, { provider: 'openai', api_key: OPENAI_KEY });
    fake.script({ kind: 'error', status: 400, message: `The key ${OPENAI_KEY} may not use this model.` });
    const res = await chat(testApp.app, headers, { model: 'gpt-4o-mini', messages: hello });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe('openai: The key [redacted] may not use this model. (HTTP 400)');
    expect(res.body).not.toContain(OPENAI_KEY);
  });

  it("Gemini's 400 API_KEY_INVALID means a dead key: it falls back instead of failing the request", async () => {
    const testApp = await open({ PROVIDER_BASE_URL_OPENROUTER: fake.baseUrl });
    const { headers } = await createUser(testApp.app);
    await connect(testApp.app, headers, { provider: 'google', api_key: 'AIza-wrong-000000000', priority: 0 });
    await connect(testApp.app, headers, { provider: 'openrouter', api_key: OPENAI_KEY, priority: 1 });
    const res = await chat(testApp.app, headers, { model: 'gemini-2.0-flash', messages: hello });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ladder-provider']).toBe('openrouter');
    expect(res.headers['x-ladder-attempts']).toBe('google;status=400;reason=auth_failed, openrouter;status=200');
    expect(gemini.requests).toHaveLength(1);
  });

  it('a deleted connection is no longer used on this node, at once', async () => {
    const testApp = await open({});
    const { headers } = await createUser(testApp.app);
    await connect(testApp.app, headers, { provider: 'openai', api_key: OPENAI_KEY });
    expect((await chat(testApp.app, headers, { model: 'gpt-4o-mini', messages: hello })).statusCode).toBe(200);
    expect((await testApp.app.inject({ method: 'DELETE', url: '/v1/providers/openai', headers })).statusCode).toBe(200);
    const res = await chat(testApp.app, headers, { model: 'gpt-4o-mini', messages: hello });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('model_not_found');
    expect(fake.requests).toHaveLength(1);
  });

  it('a replaced key is used at once on this node', async () => {
    const testApp = await open({});
    const { headers } = await createUser(testApp.app);
    await connect(testApp.app, headers, { provider: 'openai', api_key: 'sk-old-key-0000000000000' });
    expect((await chat(testApp.app, headers, { model: 'gpt-4o-mini', messages: hello })).statusCode).toBe(502);
    const patched = await testApp.app.inject({ method: 'PATCH', url: '/v1/providers/openai', headers, payload: { api_key: OPENAI_KEY } });
    expect(patched.statusCode).toBe(200);
    const res = await chat(testApp.app, headers, { model: 'gpt-4o-mini', messages: hello });
    expect(res.statusCode).toBe(200);
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-old-key-0000000000000', `Bearer ${OPENAI_KEY}`]);
  });
});
