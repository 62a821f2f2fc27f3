// POST /v1/embeddings (issue 19, section 1): each vendor asked in its own wire format, fallback
// and skipping through the one router, 400 unsupported_model, the 2,048-input bound, metering
// and the ledger, 405 for wrong methods, `embeddings` reserved as a username.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeVector } from '../fakes/vendor-embeddings.js';
import { startFakeAnthropic, startFakeAzure, startFakeGemini, startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { adminHeaders, build, createUser, type TestApp } from '../helpers/build.js';

let t: TestApp;
const fakes = {} as Record<'openai' | 'gemini' | 'azure' | 'anthropic' | 'mistral', FakeVendor>;

beforeAll(async () => {
  fakes.openai = await startFakeOpenAI();
  fakes.gemini = await startFakeGemini();
  fakes.azure = await startFakeAzure();
  fakes.anthropic = await startFakeAnthropic();
  fakes.mistral = await startFakeOpenAI({ apiKey: 'test-key-mistral' });
  t = await build({
    PROVIDER_BASE_URL_OPENAI: fakes.openai.baseUrl,
    PROVIDER_BASE_URL_GOOGLE: fakes.gemini.baseUrl,
    PROVIDER_BASE_URL_ANTHROPIC: fakes.anthropic.baseUrl,
    PROVIDER_BASE_URL_MISTRAL: fakes.mistral.baseUrl,
    // Chat answers are bounded tightly here; embeddings answers have their own, larger bound.
    PROVIDER_MAX_RESPONSE_BYTES: '1024',
  });
});
afterAll(async () => {
  await t?.close();
  await Promise.all(Object.values(fakes).map((f) => f.close()));
});
beforeEach(() => {
  for (const fake of Object.values(fakes)) fake.reset();
});

type Connection = { provider: string; api_key: string; priority: number; endpoint?: string };

async function userWith(...connections: Connection[]) {
  const user = await createUser(t.app);
  for (const c of connections) {
    const res = await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: c });
    expect(res.statusCode, res.body).toBe(201);
  }
  return user;
}
const openai = (priority = 0): Connection => ({ provider: 'openai', api_key: fakes.openai.apiKey, priority });
const google = (priority = 0): Connection => ({ provider: 'google', api_key: fakes.gemini.apiKey, priority });

const embed = (headers: Record<string, string>, payload: unknown) => t.app.inject({ method: 'POST', url: '/v1/embeddings', headers, payload: payload as object });

describe('POST /v1/embeddings', () => {
  it('openai: the request goes on unchanged and the answer comes back in OpenAI’s shape, with cost and routing headers', async () => {
    const user = await userWith(openai());
    const res = await embed(user.headers, { model: 'text-embedding-3-small', input: ['hello', 'hi'], dimensions: 3, user: 'u-1' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: fakeVector('hello', 3) }, { object: 'embedding', index: 1, embedding: fakeVector('hi', 3) }],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
    expect(fakes.openai.requests[0]!.path).toBe('/v1/embeddings');
    // Asked in base64 (a third of the bytes, exact), decoded here for a caller who wants floats.
    expect(fakes.openai.requests[0]!.body).toEqual({ input: ['hello', 'hi'], model: 'text-embedding-3-small', dimensions: 3, encoding_format: 'base64', user: 'u-1' });
    expect(res.headers['x-ladder-provider']).toBe('openai');
    expect(res.headers['x-ladder-attempts']).toBe('openai;status=200');
    // text-embedding-3-small: $0.02 per million tokens.
    expect(res.headers['x-ladder-cost-usd']).toBe('0.000000140'); // 7 tokens at $0.02 per million: 140 nanos
  });

  it('base64: asked of OpenAI as base64 and passed on; vendors that only give floats are encoded here, the same bytes', async () => {
    const user = await userWith(openai());
    const res = await embed(user.headers, { model: 'text-embedding-3-small', input: 'hello', encoding_format: 'base64' });
    const expected = Buffer.from(new Float32Array(fakeVector('hello')).buffer).toString('base64');
    expect(res.json().data).toEqual([{ object: 'embedding', index: 0, embedding: expected }]);
    expect(fakes.openai.requests[0]!.body.encoding_format).toBe('base64');

    const gemini = await userWith(google());
    const fromGemini = await embed(gemini.headers, { model: 'gemini-embedding-001', input: 'hello', encoding_format: 'base64' });
    expect(fromGemini.json().data).toEqual([{ object: 'embedding', index: 0, embedding: expected }]);
  });

  it('gemini: translated to batchEmbedContents (one request per input, outputDimensionality), usage estimated', async () => {
    const user = await userWith(google());
    const res = await embed(user.headers, { model: 'gemini-embedding-001', input: ['abcdefgh', 'xy'], dimensions: 2, user: 'ignored' });
    expect(res.statusCode, res.body).toBe(200);
    const sent = fakes.gemini.requests[0]!;
    expect(sent.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(sent.body).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'abcdefgh' }] }, outputDimensionality: 2 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'xy' }] }, outputDimensionality: 2 },
      ],
    });
    expect(res.json().data.map((d: { embedding: number[] }) => d.embedding)).toEqual([fakeVector('abcdefgh', 2), fakeVector('xy', 2)]);
    // Gemini reports no tokens for embeddings: characters / 4 per input, rounded up.
    expect(res.json().usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });

  it('azure: the deployment’s embeddings path, no model in the body', async () => {
    const user = await userWith({ provider: 'azure-openai', api_key: fakes.azure.apiKey, priority: 0, endpoint: fakes.azure.baseUrl });
    const res = await embed(user.headers, { model: 'my-embedder', input: [[1, 2, 3]] });
    expect(res.statusCode, res.body).toBe(200);
    expect(fakes.azure.requests[0]!.path).toBe('/openai/deployments/my-embedder/embeddings');
    expect(fakes.azure.requests[0]!.query['api-version']).toBeTruthy();
    expect(fakes.azure.requests[0]!.body).toEqual({ input: [[1, 2, 3]], encoding_format: 'base64' });
    expect(res.json().data[0].embedding).toEqual(fakeVector([1, 2, 3]));
  });

  it('falls back to the next connection when the first fails, and skips a vendor that cannot take a member', async () => {
    const user = await userWith({ provider: 'custom', api_key: fakes.openai.apiKey, priority: 0, endpoint: fakes.openai.baseUrl }, openai(1));
    fakes.openai.script({ kind: 'error', status: 503 });
    const res = await embed(user.headers, { model: 'text-embedding-3-small', input: 'hello' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-ladder-attempts']).toBe('custom;status=503;reason=server_error, openai;status=200');
    expect(fakes.openai.requests).toHaveLength(2);

    // Gemini takes no token arrays: skipped, and the next candidate answers.
    const both = await userWith(google(0), { provider: 'custom', api_key: fakes.openai.apiKey, priority: 1, endpoint: fakes.openai.baseUrl });
    const skipped = await embed(both.headers, { model: 'gemini-embedding-001', input: [1, 2] });
    expect(skipped.statusCode, skipped.body).toBe(200);
    expect(skipped.headers['x-ladder-attempts']).toBe('google;reason=unsupported_content, custom;status=200');
    const tokens = await userWith({ provider: 'google', api_key: fakes.gemini.apiKey, priority: 0 });
    const refused = await embed(tokens.headers, { model: 'gemini-embedding-001', input: [1, 2] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toEqual({ message: 'google: takes text input only, not token arrays.', type: 'invalid_request_error', code: 'unsupported_content', param: 'input' });
    expect(fakes.gemini.requests).toHaveLength(0);
  });

  it('400 unsupported_model when no connection can embed with the model (a chat-only vendor is no candidate)', async () => {
    const user = await userWith({ provider: 'anthropic', api_key: fakes.anthropic.apiKey, priority: 0 }, openai(1));
    const chatModel = await embed(user.headers, { model: 'claude-sonnet-4-5', input: 'hi' });
    expect(chatModel.statusCode).toBe(400);
    expect(chatModel.json().error).toMatchObject({ code: 'unsupported_model', param: 'model', type: 'invalid_request_error' });
    expect(chatModel.json().error.message).toBe('Model "claude-sonnet-4-5" cannot be used for embeddings: it is served for chat only (by anthropic), and none of your connections embeds with it. docs/providers.md lists which vendor embeds with which models.');
    const explicit = await embed(user.headers, { model: 'anthropic/voyage-3', input: 'hi' });
    expect(explicit.json().error.message).toContain('provider "anthropic" has no embeddings API');
    expect(fakes.anthropic.requests).toHaveLength(0);
    expect(fakes.openai.requests).toHaveLength(0);
  });

  it('mistral: dimensions become output_dimension; encoding and user are not sent', async () => {
    const user = await userWith({ provider: 'mistral', api_key: fakes.mistral.apiKey, priority: 0 });
    const res = await embed(user.headers, { model: 'codestral-embed', input: ['a'], dimensions: 2, encoding_format: 'base64', user: 'u' });
    // The fake speaks OpenAI's format and refuses members it does not know, as Mistral does.
    expect(res.statusCode).toBe(400);
    expect(fakes.mistral.requests[0]!.body).toEqual({ input: ['a'], model: 'codestral-embed', output_dimension: 2 });
  });

  it('bounds: at most 2,048 inputs, no empty input, no unknown member', async () => {
    const user = await userWith(openai());
    const many = await embed(user.headers, { model: 'text-embedding-3-small', input: Array.from({ length: 2049 }, () => 'x') });
    expect(many.statusCode).toBe(400);
    expect(many.json().error.param).toBe('input');
    const ok = await embed(user.headers, { model: 'text-embedding-3-small', input: Array.from({ length: 2048 }, () => 'x') });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data).toHaveLength(2048);
    expect((await embed(user.headers, { model: 'text-embedding-3-small', input: '' })).statusCode).toBe(400);
    expect((await embed(user.headers, { model: 'text-embedding-3-small', input: [] })).statusCode).toBe(400);
    const unknown = await embed(user.headers, { model: 'text-embedding-3-small', input: 'x', task: 'search' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.code).toBe('unknown_parameter');
  });

  it('embeddings answers are bounded by PROVIDER_MAX_EMBEDDINGS_RESPONSE_BYTES, not the chat bound', async () => {
    // 2,048 vectors passed above with PROVIDER_MAX_RESPONSE_BYTES at 1 KiB; a tight embeddings bound refuses them.
    const tight = await build({ PROVIDER_BASE_URL_OPENAI: fakes.openai.baseUrl, PROVIDER_MAX_EMBEDDINGS_RESPONSE_BYTES: '4096' });
    try {
      const user = await createUser(tight.app);
      await tight.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: openai() });
      const res = await tight.app.inject({ method: 'POST', url: '/v1/embeddings', headers: user.headers, payload: { model: 'text-embedding-3-small', input: Array.from({ length: 2048 }, () => 'x') } });
      expect(res.statusCode).toBe(502);
      expect(res.headers['x-ladder-attempts']).toBe('openai;status=200;reason=vendor_response_too_large');
      const small = await tight.app.inject({ method: 'POST', url: '/v1/embeddings', headers: user.headers, payload: { model: 'text-embedding-3-small', input: 'x' } });
      expect(small.statusCode).toBe(200);
    } finally {
      await tight.close();
    }
  });

  it('a vendor answer of another shape is a failed attempt: 502 when no candidate is left', async () => {
    const user = await userWith(openai(0), google(1));
    fakes.openai.script({ kind: 'wrong-shape' });
    const res = await embed(user.headers, { model: 'openai/text-embedding-3-small', input: 'x' });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_unavailable');
  });

  it('is recorded in the ledger like chat (GET /v1/usage)', async () => {
    const user = await userWith(openai());
    await embed(user.headers, { model: 'text-embedding-3-small', input: ['hello', 'hi'] });
    const { app } = t;
    let row: { requests: number; prompt_tokens: number; completion_tokens: number } | undefined;
    for (let i = 0; i < 50 && !row; i++) {
      const usage = await app.inject({ method: 'GET', url: '/v1/usage?group_by=model', headers: user.headers });
      row = usage.json().data.find((r: { group: string }) => r.group === 'text-embedding-3-small');
      if (!row) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(row).toMatchObject({ requests: 1, prompt_tokens: 7, completion_tokens: 0 });
  });

  it('a wrong method is 405 with Allow; no key is 401; `embeddings` cannot be a username', async () => {
    const user = await userWith();
    const get = await t.app.inject({ method: 'GET', url: '/v1/embeddings', headers: user.headers });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(get.json().error.code).toBe('method_not_allowed');
    const under = await t.app.inject({ method: 'GET', url: '/v1/embeddings/x', headers: user.headers });
    expect(under.statusCode).toBe(404);
    expect(under.json().error.code).toBe('unknown_route');
    expect((await t.app.inject({ method: 'POST', url: '/v1/embeddings', payload: { model: 'x', input: 'y' } })).statusCode).toBe(401);
    const reserved = await t.app.inject({ method: 'POST', url: '/v1/admin/accounts', headers: adminHeaders, payload: { username: 'embeddings' } });
    expect(reserved.json().error).toMatchObject({ code: 'reserved_username', message: 'username "embeddings" is reserved.' });
  });
});
