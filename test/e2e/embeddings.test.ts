// POST /v1/embeddings with the official openai SDK over the real TLS listener (issue 19,
// section 1): floats, base64 (the SDK's default, decoded by the SDK), dimensions, fallback from
// OpenAI to Gemini, and a model no connection embeds with.
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { fakeVector } from '../fakes/vendor-embeddings.js';
import { startFakeGemini, startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { createUser, LogCapture, testConfig } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

const KEYS = { openai: 'sk-emb-openai-1111111111', google: 'AIza-emb-3333333333', openrouter: 'sk-or-emb-4444444444' };
type Provider = keyof typeof KEYS;

let server: RunningServer;
let database: Database;
const fakes = {} as Record<'openai' | 'gemini' | 'openrouter', FakeVendor>;
const tls = new Agent({ connect: { rejectUnauthorized: false } });

beforeAll(async () => {
  fakes.openai = await startFakeOpenAI({ apiKey: KEYS.openai });
  fakes.gemini = await startFakeGemini({ apiKey: KEYS.google });
  fakes.openrouter = await startFakeOpenAI({ apiKey: KEYS.openrouter });
  database = await openTestDatabase();
  const config = testConfig({
    PORT: '0',
    PROVIDER_BASE_URL_OPENAI: fakes.openai.baseUrl,
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

async function clientFor(providers: Array<[Provider, number]>) {
  const user = await createUser(server.app);
  for (const [provider, priority] of providers) {
    const res = await server.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider, api_key: KEYS[provider], priority } });
    if (res.statusCode !== 201) throw new Error(res.body);
  }
  return new OpenAI({
    apiKey: user.key,
    baseURL: `${server.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    fetch: undiciFetch as unknown as typeof fetch,
    fetchOptions: { dispatcher: tls } as Record<string, unknown>,
  });
}

describe('embeddings.create (official openai SDK)', () => {
  it('float: the vectors as numbers, in input order, with usage', async () => {
    const client = await clientFor([['openai', 0]]);
    const result = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['hello', 'hi'], encoding_format: 'float' });
    expect(result).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: fakeVector('hello') }, { object: 'embedding', index: 1, embedding: fakeVector('hi') }],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
    // OpenAI is always asked for base64 (exact, a third of the bytes); floats are decoded here.
    expect(fakes.openai.requests[0]!.body).toEqual({ model: 'text-embedding-3-small', input: ['hello', 'hi'], encoding_format: 'base64' });
  });

  it('the SDK’s default (base64, decoded by the SDK) and dimensions', async () => {
    const client = await clientFor([['openai', 0]]);
    const result = await client.embeddings.create({ model: 'text-embedding-3-large', input: 'hello', dimensions: 3 });
    expect(fakes.openai.requests[0]!.body).toEqual({ model: 'text-embedding-3-large', input: 'hello', dimensions: 3, encoding_format: 'base64' });
    expect(result.data).toEqual([{ object: 'embedding', index: 0, embedding: fakeVector('hello', 3) }]);
  });

  it('base64 asked for explicitly: the string as OpenAI encodes it, also when Gemini (floats only) answers', async () => {
    const client = await clientFor([['google', 0]]);
    const result = await client.embeddings.create({ model: 'gemini-embedding-001', input: ['hello'], encoding_format: 'base64', dimensions: 2 });
    expect(result.data[0]!.embedding).toBe(Buffer.from(new Float32Array(fakeVector('hello', 2)).buffer).toString('base64'));
    expect(fakes.gemini.requests[0]!.body.requests[0].outputDimensionality).toBe(2);
  });

  it('falls back from a failing vendor to the next one in priority order', async () => {
    const client = await clientFor([['openrouter', 0], ['openai', 1]]);
    fakes.openrouter.script({ kind: 'error', status: 429 });
    const { data: result, response } = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello', encoding_format: 'float' }).withResponse();
    expect(result.data[0]!.embedding).toEqual(fakeVector('hello'));
    expect(response.headers.get('x-ladder-attempts')).toBe('openrouter;status=429;reason=rate_limited, openai;status=200');
    expect(fakes.openrouter.requests[0]!.body).toEqual({ model: 'text-embedding-3-small', input: 'hello' });
  });

  it('a model no connection embeds with is a 400 unsupported_model', async () => {
    const client = await clientFor([['openai', 0]]);
    const error = await client.embeddings.create({ model: 'gpt-4o-mini', input: 'hello' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('unsupported_model');
    expect(fakes.openai.requests).toHaveLength(0);
  });
});
