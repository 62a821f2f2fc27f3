// POST /v1/responses end to end (issue 19, item 2): the official openai client over the real TLS
// listener, fake vendors in their own wire formats; stored responses, previous_response_id
// across vendors, tools, refusals, fallback, the ledger, retention.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { anthropic, google, openai, openrouter, RESPONSE_ID, startHarness, type Harness } from './responses-harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

beforeEach(() => {
  for (const fake of Object.values(h.fakes)) fake.reset();
});

const weather = { type: 'function' as const, name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false };

describe('responses.create', () => {
  it('plain text on OpenAI: the Responses shape, instructions as the system message, headers, ledger', async () => {
    const user = await h.account([openai()]);
    const response = await user.client.responses.create({ model: 'gpt-4o-mini', input: 'Hello there', instructions: 'Be brief.', max_output_tokens: 100, temperature: 0.5, metadata: { topic: 'greeting' } });
    expect(response.id).toMatch(RESPONSE_ID);
    expect(response.object).toBe('response');
    expect(response.status).toBe('completed');
    expect(response.model).toBe('gpt-4o-mini');
    expect(response.output_text).toBe('echo: Hello there');
    expect(response.output).toEqual([
      { id: expect.stringMatching(/^msg_[0-9a-f]{48}$/), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'echo: Hello there', annotations: [], logprobs: [] }] },
    ]);
    const prompt = 'Be brief.'.length + 'Hello there'.length;
    expect(response.usage).toEqual({ input_tokens: prompt, input_tokens_details: { cached_tokens: 0 }, output_tokens: 17, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: prompt + 17 });
    expect(response).toMatchObject({ instructions: 'Be brief.', max_output_tokens: 100, temperature: 0.5, metadata: { topic: 'greeting' }, store: true, previous_response_id: null, error: null, incomplete_details: null, tools: [], tool_choice: 'auto' });
    // OpenAI is reached through its chat completions endpoint, like every other vendor.
    const sent = h.fakes.openai.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'Hello there' }] }],
      max_tokens: 100,
      temperature: 0.5,
    });
    expect(await h.ledger(user.id)).toEqual([{ provider: 'openai', model: 'gpt-4o-mini', prompt_tokens: prompt, completion_tokens: 17, outcome: 'ok' }]);
  });

  it('Anthropic and Gemini answer the same request through translation', async () => {
    const user = await h.account([anthropic(), google()]);
    const claude = await user.client.responses.create({ model: 'claude-sonnet-4-5', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hi Claude' }] }] });
    expect(claude.output_text).toBe('echo: Hi Claude');
    expect(h.fakes.anthropic.requests[0]!.path).toBe('/v1/messages');
    const gemini = await user.client.responses.create({ model: 'gemini-2.5-flash', input: 'Hi Gemini', text: { format: { type: 'json_object' } } });
    expect(gemini.output_text).toBe('echo: Hi Gemini');
    expect(h.fakes.gemini.requests[0]!.body.generationConfig).toMatchObject({ responseMimeType: 'application/json' });
  });

  it('falls back to the next connection when the first fails, and says so', async () => {
    const user = await h.account([openai(0), openrouter(10)]);
    h.fakes.openai.script({ kind: 'error', status: 500 });
    const res = await h.raw('POST', '/v1/responses', user.key, { model: 'gpt-4o-mini', input: 'Hello there' });
    expect(res.status).toBe(200);
    expect(res.headers['x-ladder-provider']).toBe('openrouter');
    expect(res.headers['x-ladder-attempts']).toBe('openai;status=500;reason=server_error, openrouter;status=200');
    expect(JSON.parse(res.text).output[0].content[0].text).toBe('echo: Hello there');
  });

  it('function tools: a function_call item, then a function_call_output round trip', async () => {
    const user = await h.account([openai()]);
    h.fakes.openai.script({ kind: 'tool-call', calls: [{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Paris' } }] });
    const first = await user.client.responses.create({ model: 'gpt-4o-mini', input: 'Weather in Paris?', tools: [weather], tool_choice: 'auto', parallel_tool_calls: false });
    expect(first.output).toEqual([
      { id: expect.stringMatching(/^fc_/), type: 'function_call', status: 'completed', call_id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
    expect(h.fakes.openai.requests[0]!.body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: weather.parameters, strict: false } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    // Manual conversation state: the call and its output sent back as input items.
    const call = first.output[0]!;
    const second = await user.client.responses.create({
      model: 'gpt-4o-mini',
      tools: [weather],
      input: [{ role: 'user', content: 'Weather in Paris?' }, call as never, { type: 'function_call_output', call_id: 'call_w1', output: '{"temp":21}' }],
    });
    expect(second.status).toBe('completed');
    expect(h.fakes.openai.requests[1]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_w1', content: '{"temp":21}' },
    ]);
  });

  it('previous_response_id continues the conversation on another vendor, tool output included', async () => {
    const user = await h.account([openai(), anthropic()]);
    h.fakes.openai.script({ kind: 'tool-call', calls: [{ id: 'call_p1', name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const first = await user.client.responses.create({ model: 'gpt-4o-mini', input: 'Weather in Oslo?', instructions: 'Only for turn one.', tools: [weather] });
    const second = await user.client.responses.create({
      model: 'claude-sonnet-4-5',
      previous_response_id: first.id,
      tools: [weather],
      input: [{ type: 'function_call_output', call_id: 'call_p1', output: 'cold' }],
    });
    expect(second.previous_response_id).toBe(first.id);
    const third = await user.client.responses.create({ model: 'claude-sonnet-4-5', previous_response_id: second.id, input: 'And tomorrow?' });
    expect(third.output_text).toBe('echo: And tomorrow?');
    // Instructions are not carried over (as OpenAI does); every stored item is.
    const sent = h.fakes.anthropic.requests[1]!.body;
    expect(sent.system).toBeUndefined();
    expect(sent.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_p1', name: 'get_weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_p1', content: 'cold' }] },
      { role: 'assistant', content: second.output_text },
      { role: 'user', content: 'And tomorrow?' },
    ]);
  });

  it('an unknown, malformed or other account’s previous_response_id is 404 in the envelope', async () => {
    const owner = await h.account([openai()]);
    const other = await h.account([openai()]);
    const mine = await owner.client.responses.create({ model: 'gpt-4o-mini', input: 'x' });
    for (const id of [mine.id, 'resp_00000000000000000000000000000000', 'nonsense']) {
      const res = await h.raw('POST', '/v1/responses', other.key, { model: 'gpt-4o-mini', input: 'y', previous_response_id: id });
      expect(res.status).toBe(404);
      expect(JSON.parse(res.text)).toEqual({ error: { message: `Previous response with id '${id}' not found.`, type: 'invalid_request_error', code: 'previous_response_not_found', param: null } });
    }
    expect(h.fakes.openai.requests).toHaveLength(1);
  });

  it('built-in tools are refused by name, before any vendor is called', async () => {
    const user = await h.account([openai()]);
    for (const type of ['web_search', 'file_search']) {
      const res = await h.raw('POST', '/v1/responses', user.key, { model: 'gpt-4o-mini', input: 'x', tools: [weather, { type, vector_store_ids: ['vs_1'] }] });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).error).toEqual({
        message: `tools[1] is the built-in tool "${type}", which is not supported: only function tools ({type: "function", name, parameters}) are.`,
        type: 'invalid_request_error',
        code: 'unsupported_parameter',
        param: 'tools[1]',
      });
    }
    const unknown = await h.raw('POST', '/v1/responses', user.key, { model: 'gpt-4o-mini', input: 'x', conversation: 'conv_1' });
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.text).error.code).toBe('unknown_parameter');
    expect(h.fakes.openai.requests).toHaveLength(0);
  });

  it('input items are checked kind by kind, with the member named', async () => {
    const user = await h.account([openai()]);
    const cases: Array<[unknown, string, string]> = [
      [[{ type: 'function_call_output', output: 'x' }], 'missing_required_field', 'input[0].call_id'],
      [[{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }], 'invalid_value', 'input[0].content[0]'],
      [[{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}', role: 'user' }], 'unknown_parameter', 'input[0].role'],
      [[{ type: 'item_reference', id: 'msg_1' }], 'unsupported_parameter', 'input[0]'],
      [[{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }], 'unsupported_content', 'input[0].content[0].file_id'],
    ];
    for (const [input, code, param] of cases) {
      const res = await h.raw('POST', '/v1/responses', user.key, { model: 'gpt-4o-mini', input });
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect(JSON.parse(res.text).error).toMatchObject({ code, param });
    }
    const noInput = await h.raw('POST', '/v1/responses', user.key, { model: 'gpt-4o-mini' });
    expect(JSON.parse(noInput.text).error).toMatchObject({ code: 'missing_required_field', param: 'input' });
  });
});

describe('stored responses', () => {
  it('retrieve, input_items (OpenAI’s list, both orders, paged), delete, then 404', async () => {
    const user = await h.account([openai()]);
    const created = await user.client.responses.create({
      model: 'gpt-4o-mini',
      input: [
        { role: 'developer', content: 'Answer in French.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Hello' }, { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' }] },
        { role: 'user', content: 'Hello there' },
      ],
    });
    const got = await user.client.responses.retrieve(created.id);
    expect(got).toEqual(created);
    const items = await user.client.responses.inputItems.list(created.id);
    expect(items.data.map((i: any) => [i.role, i.content[0].text])).toEqual([['user', 'Hello there'], ['user', 'Hello'], ['developer', 'Answer in French.']]);
    expect(items.data[1]).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'user',
      status: 'completed',
      content: [{ type: 'input_text', text: 'Hello' }, { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' }],
    });
    const page = await h.raw('GET', `/v1/responses/${created.id}/input_items?order=asc&limit=2`, user.key);
    const body = JSON.parse(page.text);
    expect(body).toMatchObject({ object: 'list', has_more: true, first_id: body.data[0].id, last_id: body.data[1].id });
    expect(body.data.map((i: any) => i.role)).toEqual(['developer', 'user']);
    const rest = JSON.parse((await h.raw('GET', `/v1/responses/${created.id}/input_items?order=asc&after=${body.last_id}`, user.key)).text);
    expect(rest).toMatchObject({ has_more: false, data: [{ role: 'user', content: [{ type: 'input_text', text: 'Hello there' }] }] });

    const other = await h.account([openai()]);
    const foreign = await h.raw('GET', `/v1/responses/${created.id}`, other.key);
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.text).error).toEqual({ message: `Response with id '${created.id}' not found.`, type: 'invalid_request_error', code: 'response_not_found', param: null });
    expect((await h.raw('DELETE', `/v1/responses/${created.id}`, other.key)).status).toBe(404);

    const deleted = await h.raw('DELETE', `/v1/responses/${created.id}`, user.key);
    expect(JSON.parse(deleted.text)).toEqual({ id: created.id, object: 'response', deleted: true });
    await expect(user.client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    expect((await h.raw('GET', `/v1/responses/${created.id}/input_items`, user.key)).status).toBe(404);
    expect((await h.raw('DELETE', `/v1/responses/${created.id}`, user.key)).status).toBe(404);
  });

  it('store: false answers but keeps nothing', async () => {
    const user = await h.account([openai()]);
    const created = await user.client.responses.create({ model: 'gpt-4o-mini', input: 'x', store: false });
    expect((created as unknown as { store: boolean }).store).toBe(false);
    expect((await h.raw('GET', `/v1/responses/${created.id}`, user.key)).status).toBe(404);
    const next = await h.raw('POST', '/v1/responses', user.key, { model: 'gpt-4o-mini', input: 'y', previous_response_id: created.id });
    expect(next.status).toBe(404);
  });

  it('NUL and lone surrogates are stored as U+FFFD, never refused by the database', async () => {
    const user = await h.account([openai()]);
    const created = await user.client.responses.create({ model: 'gpt-4o-mini', input: 'a\u0000b\ud800c' });
    // The vendor's text is made storable by the router already; the caller's is made so when stored.
    expect(h.fakes.openai.requests[0]!.body.messages[0].content[0].text).toBe('a\u0000b\ud800c');
    const got = await user.client.responses.retrieve(created.id);
    expect((got.output[0] as any).content[0].text).toBe('echo: a\ufffdb\ufffdc');
    const items = await user.client.responses.inputItems.list(created.id);
    expect((items.data[0] as any).content[0].text).toBe('a\ufffdb\ufffdc');
  });

  it('the retention job deletes responses older than RESPONSES_RETENTION_DAYS', async () => {
    const user = await h.account([openai()]);
    const old = await user.client.responses.create({ model: 'gpt-4o-mini', input: 'old' });
    const fresh = await user.client.responses.create({ model: 'gpt-4o-mini', input: 'new' });
    await h.database.query(`update responses set created_at = now() - interval '31 days' where id = $1`, [old.id.slice(5).replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-')]);
    const result = await h.server.app.runRetention();
    expect(result.responsesDeleted).toBe(1);
    expect((await h.raw('GET', `/v1/responses/${old.id}`, user.key)).status).toBe(404);
    expect((await h.raw('GET', `/v1/responses/${fresh.id}`, user.key)).status).toBe(200);
  });

  it('/v1/responses answers 405 for other methods, and "responses" is no username', async () => {
    const user = await h.account([openai()]);
    const get = await h.raw('GET', '/v1/responses', user.key);
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    const put = await h.raw('PUT', '/v1/responses/resp_00000000000000000000000000000000', user.key, {});
    expect(put.status).toBe(405);
    const taken = await h.server.app.inject({ method: 'POST', url: '/v1/admin/accounts', headers: { authorization: 'Bearer test-admin-token-0123456789' }, payload: { username: 'responses' } });
    expect(taken.statusCode).toBe(400);
  });
});
