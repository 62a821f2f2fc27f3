// Issue 16, item 4: text from a caller or a vendor that cannot be a header value (beyond
// Latin-1, line separators, CR/LF) used to make the answer a 500 outside the envelope
// (FST_ERR_FAILED_ERROR_SERIALIZATION) after the vendor had been called and billed. Such text
// is now sent percent-encoded, and a header that still cannot be sent is dropped by the error
// handler, which always answers in the envelope. Checked through app.inject and a real socket.
import Fastify, { type FastifyInstance } from 'fastify';
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invalidRequest } from '../../src/errors.js';
import { headerText, MAX_HEADER_TEXT } from '../../src/http/header-value.js';
import errorsPlugin from '../../src/plugins/errors.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, type TestApp } from '../helpers/build.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  json: any;
}

let fake: FakeVendor;
let t: TestApp;
let base: string;
const addresses = new Map<FastifyInstance, string>();
let user: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  t = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl });
  user = await createUser(t.app);
  const res = await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
  expect(res.statusCode).toBe(201);
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

/** One call through app.inject, and the same through a real socket. */
async function bothWays(app: FastifyInstance, url: string, method: 'GET' | 'POST', headers: Record<string, string>, payload?: object): Promise<Answer[]> {
  const injected = await app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  const address = app === t.app ? base : (addresses.get(app) ?? addresses.set(app, await app.listen({ port: 0, host: '127.0.0.1' })).get(app)!);
  const socket = await undiciRequest(`${address}${url}`, {
    method,
    headers: payload ? { ...headers, 'content-type': 'application/json' } : headers,
    ...(payload ? { body: JSON.stringify(payload) } : {}),
  });
  return [
    { status: injected.statusCode, headers: injected.headers, json: injected.json() },
    { status: socket.statusCode, headers: socket.headers, json: await socket.body.json() },
  ];
}

const chat = (model: string) => bothWays(t.app, '/v1/chat/completions', 'POST', user.headers, { model, messages: [{ role: 'user', content: 'hi' }] });

describe('headers carrying a model name', () => {
  it.each([
    ['a CJK model name', 'gpt-4o-模型', 'gpt-4o-%E6%A8%A1%E5%9E%8B'],
    ['a line separator', 'gpt-4o-\u2028x', 'gpt-4o-%E2%80%A8x'],
    ['an emoji', 'gpt-4o-🦙', 'gpt-4o-%F0%9F%A6%99'],
    ['Latin-1 and a percent sign', 'gpt-4o-é%', 'gpt-4o-%C3%A9%25'],
  ])('%s echoed by the vendor: 200, x-ladder-model percent-encoded, the body keeps the name', async (_what, model, encoded) => {
    const before = fake.requests.length;
    for (const answer of await chat(model)) {
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      expect(answer.headers['x-ladder-model']).toBe(encoded);
      expect(decodeURIComponent(encoded)).toBe(model);
      expect(answer.json.model).toBe(model);
      expect(answer.json.choices[0].message.content).toBe('echo: hi');
      expect(answer.headers['x-ladder-provider']).toBe('openai');
      expect(answer.headers['x-ladder-attempts']).toBe('openai;status=200');
    }
    expect(fake.requests.length - before).toBe(2);
    expect(fake.requests.at(-1)!.body.model).toBe(model);
  });

  it('a vendor answering a model with CR/LF: 200, the header encoded', async () => {
    const body = JSON.stringify({
      id: 'chatcmpl-x', object: 'chat.completion', created: 1, model: 'a\r\nb',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
    const raw = { kind: 'raw' as const, status: 200, body, headers: { 'content-type': 'application/json' } };
    fake.script(raw, raw);
    for (const answer of await chat('gpt-4o-mini')) {
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      expect(answer.headers['x-ladder-model']).toBe('a%0D%0Ab');
      expect(answer.json.choices[0].message.content).toBe('ok');
    }
  });

  it('a vendor model too long for a header once encoded: the header is left out', async () => {
    const body = JSON.stringify({
      id: 'chatcmpl-x', object: 'chat.completion', created: 1, model: '模'.repeat(400),
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
    const raw = { kind: 'raw' as const, status: 200, body, headers: { 'content-type': 'application/json' } };
    fake.script(raw, raw);
    for (const answer of await chat('gpt-4o-mini')) {
      expect(answer.status).toBe(200);
      expect(answer.headers['x-ladder-model']).toBeUndefined();
      expect(answer.json.model).toBe('gpt-4o-mini');
    }
  });
});

describe('headerText', () => {
  it('leaves printable ASCII as it is, encodes the rest as UTF-8, lone surrogates as U+FFFD', () => {
    expect(headerText('claude-sonnet-4-5-20250929')).toBe('claude-sonnet-4-5-20250929');
    expect(headerText('a b\tc')).toBe('a%20b%09c');
    expect(headerText('x\ud800y')).toBe('x%EF%BF%BDy');
    expect(headerText('')).toBe('');
    expect(headerText('x'.repeat(MAX_HEADER_TEXT))).toBe('x'.repeat(MAX_HEADER_TEXT));
    expect(headerText('x'.repeat(MAX_HEADER_TEXT + 1))).toBeUndefined();
  });
});

describe('the error handler when a header cannot be sent', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify();
    await app.register(errorsPlugin);
    app.get('/answers', async (_request, reply) => {
      reply.header('x-bad', 'a\u2028b');
      reply.header('x-good', 'kept');
      return { ok: true };
    });
    app.get('/throws', async (_request, reply) => {
      reply.header('x-bad', 'a\r\nb');
      throw invalidRequest('invalid_value', 'Nope.', 'x');
    });
    await app.ready();
  });
  afterAll(() => app?.close());

  it('a success whose header cannot be sent becomes a 500 in the envelope, without the header', async () => {
    for (const answer of await bothWays(app, '/answers', 'GET', {})) {
      expect(answer.status).toBe(500);
      expect(answer.json).toEqual({ error: { message: 'The server had an error while processing your request.', type: 'api_error', code: 'internal_error', param: null } });
      expect(answer.headers['x-bad']).toBeUndefined();
      expect(answer.headers['x-request-id']).toBeDefined();
    }
  });

  it('an error answer with a header that cannot be sent keeps its own status and body, without the header', async () => {
    for (const answer of await bothWays(app, '/throws', 'GET', {})) {
      expect(answer.status).toBe(400);
      expect(answer.json).toEqual({ error: { message: 'Nope.', type: 'invalid_request_error', code: 'invalid_value', param: 'x' } });
      expect(answer.headers['x-bad']).toBeUndefined();
    }
  });
});
