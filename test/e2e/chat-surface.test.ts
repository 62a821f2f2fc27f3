// The whole OpenAI chat completions surface (issue 9), end to end: the official openai client over
// the real TLS listener, and fake vendors on real sockets speaking each vendor's wire format.
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startFakeAnthropic, startFakeGemini, startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { createUser, LogCapture, testConfig } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

const KEYS = { openai: 'sk-surface-openai-1111111111', anthropic: 'sk-ant-surface-2222222222', google: 'AIza-surface-3333333333', openrouter: 'sk-or-surface-4444444444' };

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

type Provider = 'openai' | 'anthropic' | 'google' | 'openrouter';

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

async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'Weather in Paris?' };

describe('a full tool-calling round trip', () => {
  it('openai: tools go through unchanged, and the tool call comes back exactly (id, name, argument string)', async () => {
    const client = await clientFor([['openai', 0]]);
    fakes.openai.script({ kind: 'tool-call', calls: [{ id: 'call_abc123', name: 'get_weather', arguments: { city: 'Paris' } }] });
    const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [question], tools: [weatherTool], tool_choice: 'auto', parallel_tool_calls: false });
    expect(first.choices).toEqual([{
      index: 0,
      message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_abc123', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      logprobs: null,
      finish_reason: 'tool_calls',
    }]);
    expect(fakes.openai.requests[0]!.body).toEqual({ model: 'gpt-4o-mini', messages: [question], tools: [weatherTool], tool_choice: 'auto', parallel_tool_calls: false });

    const history: OpenAI.ChatCompletionMessageParam[] = [
      question,
      { role: 'assistant', content: null, tool_calls: first.choices[0]!.message.tool_calls! },
      { role: 'tool', tool_call_id: 'call_abc123', content: '{"temp_c": 21}' },
    ];
    fakes.openai.script({ kind: 'reply', content: 'It is 21 °C in Paris.' });
    const final = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: history, tools: [weatherTool] });
    expect(final.choices[0]!.message.content).toBe('It is 21 °C in Paris.');
    expect(final.choices[0]!.finish_reason).toBe('stop');
    expect(fakes.openai.requests[1]!.body.messages).toEqual(history);
  });

  it('anthropic: tools become input_schema tools, the call a tool_use block, the result a tool_result block', async () => {
    const client = await clientFor([['anthropic', 0]]);
    fakes.anthropic.script({ kind: 'tool-call', content: 'Let me check.', calls: [{ id: 'toolu_01XYZ', name: 'get_weather', arguments: { city: 'Paris' } }] });
    const first = await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [question], tools: [weatherTool], tool_choice: 'required', parallel_tool_calls: false });
    expect(first.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: 'Let me check.', refusal: null, tool_calls: [{ id: 'toolu_01XYZ', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
    const sent = fakes.anthropic.requests[0]!.body;
    expect(sent.tools).toEqual([{ name: 'get_weather', description: 'Current weather in a city', input_schema: weatherTool.function.parameters }]);
    expect(sent.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });

    fakes.anthropic.script({ kind: 'reply', content: 'It is 21 °C in Paris.' });
    const final = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      tools: [weatherTool],
      messages: [
        question,
        { role: 'assistant', content: 'Let me check.', tool_calls: first.choices[0]!.message.tool_calls! },
        { role: 'tool', tool_call_id: 'toolu_01XYZ', content: '{"temp_c": 21}' },
      ],
    });
    expect(final.choices[0]!.message.content).toBe('It is 21 °C in Paris.');
    expect(fakes.anthropic.requests[1]!.body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: 'toolu_01XYZ', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01XYZ', content: '{"temp_c": 21}' }] },
    ]);
  });

  it('gemini: functionDeclarations, a functionCall part, and a functionResponse answered by name', async () => {
    const client = await clientFor([['google', 0]]);
    fakes.gemini.script({ kind: 'tool-call', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] });
    const first = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [question],
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call).toEqual({ id: expect.stringMatching(/^call_[0-9a-f]{24}$/), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(first.choices[0]!.message.content).toBeNull();
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    const sent = fakes.gemini.requests[0]!.body;
    expect(sent.tools).toEqual([{ functionDeclarations: [{ name: 'get_weather', description: 'Current weather in a city', parametersJsonSchema: weatherTool.function.parameters }] }]);
    expect(sent.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });

    fakes.gemini.script({ kind: 'reply', content: 'It is 21 °C in Paris.' });
    const final = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      tools: [weatherTool],
      messages: [question, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: '{"temp_c": 21}' }],
    });
    expect(final.choices[0]!.message.content).toBe('It is 21 °C in Paris.');
    expect(fakes.gemini.requests[1]!.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp_c: 21 } } }] },
    ]);
  });

  it('a vendor id given by Gemini is kept as it is', async () => {
    const client = await clientFor([['google', 0]]);
    fakes.gemini.script({ kind: 'tool-call', calls: [{ id: 'gem-call-7', name: 'get_weather', arguments: {} }] });
    const answer = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [question], tools: [weatherTool] });
    expect(answer.choices[0]!.message.tool_calls![0]!.id).toBe('gem-call-7');
  });
});

describe('structured output with a JSON schema', () => {
  const schema = { type: 'object', properties: { city: { type: 'string' }, temp_c: { type: 'number' } }, required: ['city', 'temp_c'], additionalProperties: false };
  const format: OpenAI.ResponseFormatJSONSchema = { type: 'json_schema', json_schema: { name: 'weather', schema, strict: true } };

  it('openai: response_format is passed on unchanged', async () => {
    const client = await clientFor([['openai', 0]]);
    fakes.openai.script({ kind: 'reply', content: '{"city":"Paris","temp_c":21}' });
    const answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [question], response_format: format });
    expect(JSON.parse(answer.choices[0]!.message.content!)).toEqual({ city: 'Paris', temp_c: 21 });
    expect(fakes.openai.requests[0]!.body.response_format).toEqual(format);
  });

  it('gemini: responseMimeType application/json and responseJsonSchema', async () => {
    const client = await clientFor([['google', 0]]);
    fakes.gemini.script({ kind: 'reply', content: '{"city":"Paris","temp_c":21}' });
    const answer = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [question], response_format: format });
    expect(answer.choices[0]!.message.content).toBe('{"city":"Paris","temp_c":21}');
    expect(fakes.gemini.requests[0]!.body.generationConfig).toEqual({ responseMimeType: 'application/json', responseJsonSchema: schema });
  });

  it('anthropic: a forced tool whose input_schema is the schema; its input is the message content', async () => {
    const client = await clientFor([['anthropic', 0]]);
    fakes.anthropic.script({ kind: 'tool-call', calls: [{ id: 'toolu_json', name: 'weather', arguments: { city: 'Paris', temp_c: 21 } }] });
    const answer = await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [question], response_format: format });
    expect(answer.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: '{"city":"Paris","temp_c":21}', refusal: null }, logprobs: null, finish_reason: 'stop' });
    const sent = fakes.anthropic.requests[0]!.body;
    expect(sent.tools).toEqual([{ name: 'weather', input_schema: schema }]);
    expect(sent.tool_choice).toEqual({ type: 'tool', name: 'weather' });
  });
});

describe('n, stop, max_completion_tokens and developer messages reach each vendor in its form', () => {
  it('n: 2 gives two choices (openai n, gemini candidateCount); anthropic cannot, and says so', async () => {
    const openai = await clientFor([['openai', 0]]);
    const a = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [question], n: 2 });
    expect(a.choices.map((c) => [c.index, c.message.content])).toEqual([[0, 'echo: Weather in Paris?'], [1, 'echo: Weather in Paris?']]);
    expect(fakes.openai.requests[0]!.body.n).toBe(2);

    const gemini = await clientFor([['google', 0]]);
    const g = await gemini.chat.completions.create({ model: 'gemini-2.5-flash', messages: [question], n: 2 });
    expect(g.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(fakes.gemini.requests[0]!.body.generationConfig).toEqual({ candidateCount: 2 });

    const anthropic = await clientFor([['anthropic', 0]]);
    const error = await apiError(anthropic.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [question], n: 2 }));
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ code: 'unsupported_parameter', param: 'n', type: 'invalid_request_error' });
    expect((error.error as { message: string }).message).toMatch(/^anthropic cannot honour `n`/);
    expect(fakes.anthropic.requests).toEqual([]);
  });

  it('stop: as sent to openai, stop_sequences for anthropic, stopSequences for gemini', async () => {
    for (const [provider, model] of [['openai', 'gpt-4o-mini'], ['anthropic', 'claude-sonnet-4-5'], ['google', 'gemini-2.5-flash']] as const) {
      const client = await clientFor([[provider, 0]]);
      await client.chat.completions.create({ model, messages: [question], stop: ['END', '###'] });
    }
    expect(fakes.openai.requests[0]!.body.stop).toEqual(['END', '###']);
    expect(fakes.anthropic.requests[0]!.body.stop_sequences).toEqual(['END', '###']);
    expect(fakes.gemini.requests[0]!.body.generationConfig.stopSequences).toEqual(['END', '###']);
  });

  it('max_completion_tokens: as sent to openai, max_tokens for anthropic, maxOutputTokens for gemini', async () => {
    for (const [provider, model] of [['openai', 'gpt-4o-mini'], ['anthropic', 'claude-sonnet-4-5'], ['google', 'gemini-2.5-flash']] as const) {
      const client = await clientFor([[provider, 0]]);
      await client.chat.completions.create({ model, messages: [question], max_completion_tokens: 321 });
    }
    expect(fakes.openai.requests[0]!.body.max_completion_tokens).toBe(321);
    expect(fakes.anthropic.requests[0]!.body.max_tokens).toBe(321);
    expect(fakes.gemini.requests[0]!.body.generationConfig).toEqual({ maxOutputTokens: 321 });
  });

  it('developer messages: as sent to openai, system for anthropic, systemInstruction for gemini', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'developer', content: 'Answer in French.' }, question];
    for (const [provider, model] of [['openai', 'gpt-4o-mini'], ['anthropic', 'claude-sonnet-4-5'], ['google', 'gemini-2.5-flash']] as const) {
      const client = await clientFor([[provider, 0]]);
      const answer = await client.chat.completions.create({ model, messages });
      expect(answer.choices[0]!.message.content).toBe('echo: Weather in Paris?');
    }
    expect(fakes.openai.requests[0]!.body.messages).toEqual(messages);
    expect(fakes.anthropic.requests[0]!.body.system).toBe('Answer in French.');
    expect(fakes.gemini.requests[0]!.body.systemInstruction).toEqual({ parts: [{ text: 'Answer in French.' }] });
  });
});

describe('fallback with parameters a vendor cannot honour', () => {
  it('a candidate that cannot honour a parameter is skipped, the next one that can answers', async () => {
    const client = await clientFor([['anthropic', 0], ['openrouter', 1]]);
    const { data, response } = await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [question], seed: 42 }).withResponse();
    expect(data.choices[0]!.message.content).toBe('echo: Weather in Paris?');
    expect(data.model).toBe('claude-sonnet-4-5');
    expect(response.headers.get('x-ladder-provider')).toBe('openrouter');
    expect(response.headers.get('x-ladder-model')).toBe('claude-sonnet-4-5');
    expect(response.headers.get('x-ladder-attempts')).toBe('anthropic;reason=unsupported_parameter, openrouter;status=200');
    expect(fakes.anthropic.requests).toEqual([]);
    expect(fakes.openrouter.requests[0]!.body.seed).toBe(42);
  });

  it('without a candidate that can honour it: 400 unsupported_parameter naming the parameter and the vendor', async () => {
    const client = await clientFor([['anthropic', 0]]);
    const error = await apiError(client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [question], seed: 42 }));
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ code: 'unsupported_parameter', param: 'seed' });
    expect((error.error as { message: string }).message).toContain('anthropic cannot honour `seed`');
  });

  it("the vendor's exact model is in x-ladder-model, the requested name in the body", async () => {
    const client = await clientFor([['google', 0]]);
    const { data, response } = await client.chat.completions.create({ model: 'google/gemini-2.5-flash', messages: [question] }).withResponse();
    expect(data.model).toBe('google/gemini-2.5-flash');
    expect(response.headers.get('x-ladder-model')).toBe('gemini-2.5-flash');
  });

  it("a vendor's 400 about a parameter is the caller's fault: no fallback", async () => {
    const client = await clientFor([['openai', 0]]);
    fakes.openai.script({ kind: 'error', status: 400, message: "Invalid parameter: 'logit_bias' is not supported with this model." });
    const error = await apiError(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [question], logit_bias: { '50256': -100 } }));
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ code: 'provider_rejected_request' });
    expect(fakes.openai.requests).toHaveLength(1);
  });
});

describe('models', () => {
  it('models.list(): what the connections serve, plain and provider/model; models.retrieve() one of them', async () => {
    const client = await clientFor([['openai', 0], ['anthropic', 1], ['google', 2]]);
    fakes.openai.setModels(['gpt-4o-mini', 'whisper-1']);
    fakes.anthropic.setModels(['claude-sonnet-4-5']);
    fakes.gemini.setModels(['gemini-2.5-flash', 'embedding-001']);
    const list = await client.models.list();
    expect(list.data.map((m) => [m.id, m.owned_by])).toEqual([
      ['anthropic/claude-sonnet-4-5', 'anthropic'],
      ['claude-sonnet-4-5', 'anthropic'],
      ['gemini-2.5-flash', 'google'],
      ['google/gemini-2.5-flash', 'google'],
      ['gpt-4o-mini', 'openai'],
      ['openai/gpt-4o-mini', 'openai'],
    ]);
    expect(list.data[4]).toEqual({ id: 'gpt-4o-mini', object: 'model', created: 1_700_000_000, owned_by: 'openai' });

    expect(await client.models.retrieve('anthropic/claude-sonnet-4-5')).toEqual({ id: 'anthropic/claude-sonnet-4-5', object: 'model', created: Date.parse('2025-05-14T00:00:00Z') / 1000, owned_by: 'anthropic' });
    const missing = await apiError(client.models.retrieve('gpt-does-not-exist'));
    expect(missing.status).toBe(404);
    expect(missing.error).toMatchObject({ code: 'model_not_found', type: 'invalid_request_error', param: 'model' });
  });

  it('a raw slash in the id works too; /v1/models is ours, never a ladder author; other methods are 405', async () => {
    const user = await createUser(server.app);
    await server.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'anthropic', api_key: KEYS.anthropic } });
    fakes.anthropic.setModels(['claude-haiku-4-5']);
    const one = await server.app.inject({ method: 'GET', url: '/v1/models/anthropic/claude-haiku-4-5', headers: user.headers });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ id: 'anthropic/claude-haiku-4-5', object: 'model', owned_by: 'anthropic' });
    const list = await server.app.inject({ method: 'GET', url: '/v1/models', headers: user.headers });
    expect(list.json()).toMatchObject({ object: 'list', data: [{ id: 'anthropic/claude-haiku-4-5' }, { id: 'claude-haiku-4-5' }] });
    const post = await server.app.inject({ method: 'POST', url: '/v1/models', headers: user.headers, payload: {} });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET');
  });

  it('the list is cached: a second call asks no vendor', async () => {
    const client = await clientFor([['openai', 0]]);
    fakes.openai.setModels(['gpt-4o']);
    await client.models.list();
    await client.models.list();
    expect(fakes.openai.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
  });

  it('a vendor whose list cannot be read is left out of the list, and its names are still found by retrieve', async () => {
    const client = await clientFor([['openai', 0]]);
    // No list set: the fake answers 404.
    expect((await client.models.list()).data).toEqual([]);
    expect(await client.models.retrieve('gpt-4o')).toEqual({ id: 'gpt-4o', object: 'model', created: 0, owned_by: 'openai' });
  });
});
