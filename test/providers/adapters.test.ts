import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANTHROPIC_DEFAULT_MAX_TOKENS, toAnthropicBody } from '../../src/providers/adapters/anthropic.js';
import { toGeminiBody } from '../../src/providers/adapters/gemini.js';
import { AZURE_API_VERSION } from '../../src/providers/adapters/index.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { startFakeAnthropic, startFakeAzure, startFakeGemini, startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { connection, rejection, routerWith } from './helpers.js';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';

let openai: FakeVendor, anthropic: FakeVendor, gemini: FakeVendor, azure: FakeVendor, mistral: FakeVendor;
let env: ReturnType<typeof routerWith>;

beforeAll(async () => {
  [openai, anthropic, gemini, azure, mistral] = await Promise.all([
    startFakeOpenAI(), startFakeAnthropic(), startFakeGemini(), startFakeAzure(), startFakeOpenAI({ apiKey: 'mistral-key' }),
  ]);
  env = routerWith({
    allowPrivateEndpoints: true,
    baseUrls: { openai: openai.baseUrl, anthropic: anthropic.baseUrl, google: gemini.baseUrl, mistral: mistral.baseUrl },
  });
});
afterAll(async () => {
  await env.router.close();
  await Promise.all([openai, anthropic, gemini, azure, mistral].map((f) => f.close()));
});

describe('OpenAI chat completions', () => {
  it('sends Bearer auth and the request unchanged to {base}/chat/completions, and normalises the answer', async () => {
    openai.reset();
    const request: ChatRequest = {
      model: 'gpt-4o-mini',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }],
      temperature: 0.2,
      max_tokens: 50,
    };
    const result = await env.router.call(request, [connection('openai', openai.apiKey)]);
    expect(openai.requests).toHaveLength(1);
    const received = openai.requests[0]!;
    expect(received.path).toBe('/v1/chat/completions');
    expect(received.headers.authorization).toBe(`Bearer ${openai.apiKey}`);
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.body).toEqual({ model: 'gpt-4o-mini', messages: request.messages, temperature: 0.2, max_tokens: 50 });
    expect(result).toMatchObject({
      content: 'echo: Hello',
      finishReason: 'stop',
      usage: { prompt_tokens: 14, completion_tokens: 11, total_tokens: 25 },
      provider: 'openai',
    });
    expect(result.attempts).toEqual([{ provider: 'openai', status: 200, outcome: 'ok', latencyMs: expect.any(Number) }]);
    expect(result.upstreamMs).toBeGreaterThan(0);
  });

  it('passes content parts through and uses max_completion_tokens for reasoning models', async () => {
    openai.reset();
    const messages: ChatRequest['messages'] = [
      { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: PNG } }] },
    ];
    await env.router.call({ model: 'o3-mini', messages, max_tokens: 10 }, [connection('openai', openai.apiKey)]);
    expect(openai.requests[0]!.body).toEqual({ model: 'o3-mini', messages, max_completion_tokens: 10 });
  });

  it('maps finish_reason length and tool_calls', async () => {
    openai.script({ kind: 'reply', content: 'cut', finish: 'length' }, { kind: 'reply', content: '', finish: 'function_call' });
    const conns = [connection('openai', openai.apiKey)];
    expect((await env.router.call({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }, conns)).finishReason).toBe('length');
    expect((await env.router.call({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }, conns)).finishReason).toBe('tool_calls');
  });

  it('an OpenAI-compatible vendor is the same wire format at its own base URL', async () => {
    mistral.reset();
    const result = await env.router.call(
      { model: 'mistral-small-latest', messages: [{ role: 'user', content: 'Bonjour' }] },
      [connection('mistral', 'mistral-key')],
    );
    expect(mistral.requests[0]!.body).toEqual({ model: 'mistral-small-latest', messages: [{ role: 'user', content: 'Bonjour' }] });
    expect(result.content).toBe('echo: Bonjour');
    expect(result.provider).toBe('mistral');
  });
});

describe('Anthropic Messages', () => {
  it('moves the system prompt out, adds the default max_tokens and sends x-api-key and anthropic-version', async () => {
    anthropic.reset();
    const result = await env.router.call(
      { model: 'claude-3-5-haiku-latest', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }], temperature: 0.5 },
      [connection('anthropic', anthropic.apiKey)],
    );
    const received = anthropic.requests[0]!;
    expect(received.path).toBe('/v1/messages');
    expect(received.headers['x-api-key']).toBe(anthropic.apiKey);
    expect(received.headers['anthropic-version']).toBe('2023-06-01');
    expect(received.headers.authorization).toBeUndefined();
    expect(received.body).toEqual({
      model: 'claude-3-5-haiku-latest',
      max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello' }],
      temperature: 0.5,
    });
    expect(result).toMatchObject({
      content: 'echo: Hello',
      finishReason: 'stop',
      usage: { prompt_tokens: 14, completion_tokens: 11, total_tokens: 25 },
      provider: 'anthropic',
    });
  });

  it('translates images (base64 and URL), merges consecutive turns and hoists every system message', () => {
    const body = toAnthropicBody(
      {
        model: 'claude-x',
        max_tokens: 64,
        messages: [
          { role: 'system', content: 'One.' },
          { role: 'user', content: 'First' },
          { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: PNG } }] },
          { role: 'system', content: [{ type: 'text', text: 'Two.' }] },
          { role: 'assistant', content: 'Seen.' },
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } }] },
        ],
      },
      'claude-x',
    );
    expect(body).toEqual({
      model: 'claude-x',
      max_tokens: 64,
      system: 'One.\n\nTwo.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'First' },
            { type: 'text', text: 'Look' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        { role: 'assistant', content: 'Seen.' },
        { role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } }] },
      ],
    });
  });

  it.each([
    ['end_turn', 'stop'], ['stop_sequence', 'stop'], ['max_tokens', 'length'], ['refusal', 'content_filter'], ['tool_use', 'tool_calls'],
  ])('maps stop_reason %s to %s', async (stop, finish) => {
    anthropic.script({ kind: 'reply', content: 'x', finish: stop });
    const result = await env.router.call({ model: 'claude-3-opus', messages: [{ role: 'user', content: 'x' }] }, [connection('anthropic', anthropic.apiKey)]);
    expect(result.finishReason).toBe(finish);
  });

  it('is accepted by the fake end to end with images, which validates block shapes', async () => {
    anthropic.reset();
    const result = await env.router.call(
      { model: 'claude-3-opus', messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe' }, { type: 'image_url', image_url: { url: PNG } }] }] },
      [connection('anthropic', anthropic.apiKey)],
    );
    expect(result.content).toBe('echo: Describe');
  });
});

describe('Gemini generateContent', () => {
  it('posts contents/systemInstruction/generationConfig to models/{model}:generateContent with x-goog-api-key', async () => {
    gemini.reset();
    const result = await env.router.call(
      {
        model: 'gemini-2.0-flash',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello!' },
          { role: 'user', content: [{ type: 'text', text: 'And this?' }, { type: 'image_url', image_url: { url: PNG } }] },
        ],
        temperature: 0.1,
        max_tokens: 20,
      },
      [connection('google', gemini.apiKey)],
    );
    const received = gemini.requests[0]!;
    expect(received.path).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
    expect(received.headers['x-goog-api-key']).toBe(gemini.apiKey);
    expect(received.query).toEqual({});
    expect(received.body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello!' }] },
        { role: 'user', parts: [{ text: 'And this?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { temperature: 0.1, maxOutputTokens: 20 },
    });
    expect(result).toMatchObject({
      content: 'echo: And this?',
      finishReason: 'stop',
      usage: { prompt_tokens: 'Be brief.HiHello!And this?'.length, completion_tokens: 15, total_tokens: 26 + 15 },
      provider: 'google',
    });
  });

  it('merges consecutive same-role messages and omits generationConfig when nothing is set', () => {
    expect(toGeminiBody({ model: 'g', messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }] })).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a' }, { text: 'b' }] }],
    });
  });

  it.each([['STOP', 'stop'], ['MAX_TOKENS', 'length'], ['SAFETY', 'content_filter'], ['RECITATION', 'content_filter']])(
    'maps finishReason %s to %s',
    async (reason, finish) => {
      gemini.script({ kind: 'reply', content: 'x', finish: reason });
      const result = await env.router.call({ model: 'gemini-pro', messages: [{ role: 'user', content: 'x' }] }, [connection('google', gemini.apiKey)]);
      expect(result.finishReason).toBe(finish);
    },
  );

  it('refuses http image URLs, which Gemini cannot fetch, as the request\'s own fault', async () => {
    const error = await rejection(
      env.router.call(
        { model: 'gemini-pro', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] },
        [connection('google', gemini.apiKey)],
      ),
    );
    expect(error).toMatchObject({ statusCode: 400, code: 'unsupported_content', param: 'messages[0].content[0]' });
  });

  it('treats Google\'s 400 API_KEY_INVALID as a dead key and falls back', async () => {
    openai.reset();
    const result = await env.router.call(
      { model: 'gemini-pro', messages: [{ role: 'user', content: 'x' }] },
      [connection('google', 'wrong-key', { priority: 0 }), connection('custom', openai.apiKey, { priority: 1, endpoint: openai.baseUrl })],
    );
    expect(result.provider).toBe('custom');
    expect(result.attempts.map((a) => [a.provider, a.status, a.reason])).toEqual([['google', 400, 'auth_failed'], ['custom', 200, undefined]]);
  });
});

describe('Azure OpenAI', () => {
  it('calls {endpoint}/openai/deployments/{deployment}/chat/completions with api-version and the api-key header', async () => {
    azure.reset();
    const result = await env.router.call(
      { model: 'azure-openai/my-gpt4o', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5 },
      [connection('azure-openai', azure.apiKey, { endpoint: azure.url })],
    );
    const received = azure.requests[0]!;
    expect(received.path).toBe('/openai/deployments/my-gpt4o/chat/completions');
    expect(received.query).toEqual({ 'api-version': AZURE_API_VERSION });
    expect(received.headers['api-key']).toBe(azure.apiKey);
    expect(received.headers.authorization).toBeUndefined();
    expect(received.body).toEqual({ messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5 });
    expect(result).toMatchObject({ content: 'echo: Hi', provider: 'azure-openai', usage: { prompt_tokens: 2, completion_tokens: 8, total_tokens: 10 } });
  });
});

describe('custom OpenAI-compatible endpoint', () => {
  it('uses the connection endpoint as the base URL', async () => {
    openai.reset();
    const result = await env.router.call(
      { model: 'llama3.2:3b', messages: [{ role: 'user', content: 'Hi' }] },
      [connection('custom', openai.apiKey, { endpoint: `${openai.baseUrl}/` })],
    );
    expect(openai.requests[0]!.path).toBe('/v1/chat/completions');
    expect(openai.requests[0]!.body.model).toBe('llama3.2:3b');
    expect(result.content).toBe('echo: Hi');
  });
});
