// POST /v1/responses with stream: true (issue 19, item 2): the Responses event sequence from each
// vendor's own stream, responses.stream().finalResponse() of the official SDK, fallback before
// the first chunk, response.failed after it, and the streamed response stored.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { anthropic, eventsOf, google, openai, openrouter, RESPONSE_ID, startHarness, type Harness } from './responses-harness.js';

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

const weather = { type: 'function' as const, name: 'get_weather', parameters: { type: 'object' }, strict: null };

describe('streamed responses', () => {
  it('the event sequence: created, in_progress, item and part added, text deltas, the .done events, completed; sequence numbers 0..n', async () => {
    const user = await h.account([openai()]);
    const res = await h.raw('POST', '/v1/responses', user.key, { model: 'gpt-4o-mini', input: 'Hello there', stream: true });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['x-ladder-provider']).toBe('openai');
    const events = eventsOf(res.text);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    for (const e of events) expect(e.event).toBe(e.data.type);
    const types = events.map((e) => e.event);
    const deltas = events.filter((e) => e.event === 'response.output_text.delta');
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...deltas.map(() => 'response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(deltas.map((e) => e.data.delta).join('')).toBe('echo: Hello there');
    const created = events[0]!.data.response;
    expect(created).toMatchObject({ id: expect.stringMatching(RESPONSE_ID), object: 'response', status: 'in_progress', output: [], usage: null });
    const item = events[2]!.data.item;
    expect(item).toEqual({ id: expect.stringMatching(/^msg_/), type: 'message', status: 'in_progress', role: 'assistant', content: [] });
    expect(deltas[0]!.data).toEqual({ type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: 'echo', logprobs: [], sequence_number: 4 });
    const completed = events.at(-1)!.data.response;
    expect(completed).toMatchObject({ id: created.id, status: 'completed', output: [{ id: item.id, status: 'completed', content: [{ type: 'output_text', text: 'echo: Hello there' }] }] });
    expect(completed.usage).toEqual({ input_tokens: 11, input_tokens_details: { cached_tokens: 0 }, output_tokens: 17, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 28 });
    // Stored as it was streamed, and metered.
    const stored = await h.raw('GET', `/v1/responses/${created.id}`, user.key);
    expect(JSON.parse(stored.text)).toEqual(completed);
    expect(await h.ledger(user.id)).toEqual([{ provider: 'openai', model: 'gpt-4o-mini', prompt_tokens: 11, completion_tokens: 17, outcome: 'ok' }]);
  });

  for (const [vendor, model, connection] of [['OpenAI', 'gpt-4o-mini', openai()], ['Anthropic', 'claude-sonnet-4-5', anthropic()], ['Gemini', 'gemini-2.5-flash', google()]] as const) {
    it(`responses.stream().finalResponse() on ${vendor}: text, and function calls with their arguments`, async () => {
      const user = await h.account([connection]);
      const text = await user.client.responses.stream({ model, input: 'Hello there' }).finalResponse();
      expect(text.output_text).toBe('echo: Hello there');
      expect(text.status).toBe('completed');
      const fake = vendor === 'OpenAI' ? h.fakes.openai : vendor === 'Anthropic' ? h.fakes.anthropic : h.fakes.gemini;
      fake.script({ kind: 'tool-call', calls: [{ id: 'call_a', name: 'get_weather', arguments: { city: 'Paris', unit: 'c' } }, { id: 'call_b', name: 'get_weather', arguments: { city: 'Rome' } }] });
      const calls = await user.client.responses.stream({ model, input: 'Weather?', tools: [weather] }).finalResponse();
      expect(calls.output.filter((o) => o.type === 'function_call').map((o: any) => [o.name, JSON.parse(o.arguments), o.status])).toEqual([
        ['get_weather', { city: 'Paris', unit: 'c' }, 'completed'],
        ['get_weather', { city: 'Rome' }, 'completed'],
      ]);
      expect(new Set(calls.output.map((o) => o.id)).size).toBe(calls.output.length);
    });
  }

  it('function call events: added with name and call_id, argument deltas, arguments.done', async () => {
    const user = await h.account([openai()]);
    h.fakes.openai.script({ kind: 'tool-call', calls: [{ id: 'call_x', name: 'get_weather', arguments: { city: 'Paris' } }] });
    const res = await h.raw('POST', '/v1/responses', user.key, { model: 'gpt-4o-mini', input: 'x', tools: [weather], stream: true });
    const events = eventsOf(res.text);
    const added = events.find((e) => e.event === 'response.output_item.added')!.data;
    expect(added.item).toEqual({ id: expect.stringMatching(/^fc_/), type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_x', name: 'get_weather' });
    const deltas = events.filter((e) => e.event === 'response.function_call_arguments.delta').map((e) => e.data.delta);
    expect(deltas.join('')).toBe('{"city":"Paris"}');
    expect(events.find((e) => e.event === 'response.function_call_arguments.done')!.data).toMatchObject({ item_id: added.item.id, output_index: 0, name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(events.at(-1)!.event).toBe('response.completed');
  });

  it('a failing first connection falls back before the first event', async () => {
    const user = await h.account([openai(0), openrouter(10)]);
    h.fakes.openai.script({ kind: 'error', status: 503 });
    const final = await user.client.responses.stream({ model: 'gpt-4o-mini', input: 'Hello there' }).finalResponse();
    expect(final.output_text).toBe('echo: Hello there');
    expect(h.fakes.openrouter.requests).toHaveLength(1);
  });

  it('a vendor dying mid-stream: response.failed with what was received, stored as failed', async () => {
    const user = await h.account([openai()]);
    h.fakes.openai.script({ kind: 'stream-die', after: 3 });
    const res = await h.raw('POST', '/v1/responses', user.key, { model: 'gpt-4o-mini', input: 'Hello there', stream: true });
    const events = eventsOf(res.text);
    const last = events.at(-1)!;
    expect(last.event).toBe('response.failed');
    expect(events.some((e) => e.event === 'response.completed' || e.event === 'response.output_item.done')).toBe(false);
    expect(last.data.response).toMatchObject({ status: 'failed', error: { code: 'server_error', message: expect.stringContaining('The stream was cut') } });
    expect(last.data.response.output[0]).toMatchObject({ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: 'echo: He' }] });
    const stored = JSON.parse((await h.raw('GET', `/v1/responses/${last.data.response.id}`, user.key)).text);
    expect(stored.status).toBe('failed');
    const rows = await h.ledger(user.id);
    expect(rows).toEqual([expect.objectContaining({ provider: 'openai', outcome: 'upstream_stream_interrupted' })]);
  });

  it('errors before the first chunk are plain JSON answers', async () => {
    const user = await h.account([openai()]);
    const res = await h.raw('POST', '/v1/responses', user.key, { model: 'claude-sonnet-4-5', input: 'x', stream: true });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.text).error.code).toBe('model_not_found');
  });
});
