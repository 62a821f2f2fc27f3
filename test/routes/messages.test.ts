// POST /v1/messages through app.inject (issue 19, section 3): the translation of each block
// type for a chat vendor, what makes a request Anthropic-only, quotas answered in Anthropic's
// error shape, and the ledger row of a Messages call.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { adminHeaders, build, createUser, type TestApp } from '../helpers/build.js';

let t: TestApp;
let openai: FakeVendor;
let anthropic: FakeVendor;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  t = await build({ PROVIDER_BASE_URL_OPENAI: openai.baseUrl, PROVIDER_BASE_URL_ANTHROPIC: anthropic.baseUrl });
});
afterAll(async () => {
  await t?.close();
  await openai.close();
  await anthropic.close();
});
beforeEach(() => {
  openai.reset();
  anthropic.reset();
});

async function userWith(...providers: Array<'openai' | 'anthropic'>) {
  const user = await createUser(t.app);
  for (const [priority, provider] of providers.entries()) {
    const key = provider === 'openai' ? openai.apiKey : anthropic.apiKey;
    const res = await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider, api_key: key, priority } });
    expect(res.statusCode, res.body).toBe(201);
  }
  return { ...user, anthropicHeaders: { 'x-api-key': user.key, 'anthropic-version': '2023-06-01' } };
}

const send = (headers: Record<string, string>, payload: object) => t.app.inject({ method: 'POST', url: '/v1/messages', headers, payload });

describe('POST /v1/messages, translated for a chat vendor', () => {
  it('images, documents, thinking history and output_config become chat members', async () => {
    const user = await userWith('openai');
    const res = await send(user.anthropicHeaders, {
      model: 'gpt-5',
      max_tokens: 300,
      system: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }],
      output_config: { effort: 'low', format: { type: 'json_schema', schema: { type: 'object' } } },
      thinking: { type: 'adaptive' },
      messages: [
        { role: 'user', content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
          { type: 'document', title: 'a.pdf', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
          { type: 'text', text: 'Describe', cache_control: { type: 'ephemeral' } },
        ] },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, { type: 'text', text: 'Sure.' }] },
        { role: 'user', content: 'Go on' },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(openai.requests[0]!.body).toEqual({
      model: 'gpt-5',
      max_completion_tokens: 300,
      reasoning_effort: 'low',
      response_format: { type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object' }, strict: true } },
      messages: [
        { role: 'system', content: 'A\n\nB' },
        { role: 'user', content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBER', filename: 'a.pdf' } },
          { type: 'text', text: 'plain words' },
          { type: 'text', text: 'Describe' },
        ] },
        { role: 'assistant', content: 'Sure.' },
        { role: 'user', content: 'Go on' },
      ],
    });
  });

  it('an image in a tool result makes the request Anthropic-only: the chat vendor is skipped, Anthropic gets it as it came', async () => {
    const user = await userWith('openai', 'anthropic');
    const body = {
      model: 'anthropic/claude-sonnet-4-5',
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'Screenshot?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'shot', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA' } }] }] },
      ],
      tools: [{ name: 'shot', input_schema: { type: 'object' } }],
    };
    const res = await send(user.anthropicHeaders, body);
    expect(res.statusCode, res.body).toBe(200);
    expect(anthropic.requests[0]!.body).toEqual({ ...body, model: 'claude-sonnet-4-5' });

    const chatOnly = await userWith('openai');
    const refused = await send(chatOnly.anthropicHeaders, { ...body, model: 'gpt-4o-mini' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'openai: cannot take this Messages request (messages[2].content[0].content[0] is not text (other vendors take text tool results only)); only Anthropic can.' },
      request_id: expect.any(String),
    });
    expect(openai.requests).toHaveLength(0);
  });

  it('a malformed block is a 400 naming it', async () => {
    const user = await userWith('openai');
    const res = await send(user.anthropicHeaders, { model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'text' }] }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({ type: 'invalid_request_error', message: 'Missing required field: messages[0].content[0].text.' });
    expect(res.headers['x-ladder-error-code']).toBe('missing_required_field');
  });
});

describe('limits and the ledger', () => {
  it('a rate limit is 429 rate_limit_error with retry-after; a spend quota 402 billing_error', async () => {
    const user = await userWith('openai');
    const limits = await t.app.inject({ method: 'PUT', url: `/v1/admin/accounts/${user.username}/limits`, headers: adminHeaders, payload: { requests_per_minute: 1 } });
    expect(limits.statusCode, limits.body).toBe(200);
    const body = { model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] };
    expect((await send(user.anthropicHeaders, body)).statusCode).toBe(200);
    const limited = await send(user.anthropicHeaders, body);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.type).toBe('rate_limit_error');
    expect(limited.headers['retry-after']).toBeDefined();
    await t.app.inject({ method: 'PUT', url: `/v1/admin/accounts/${user.username}/limits`, headers: adminHeaders, payload: { requests_per_minute: null, usd_per_day: 0.000001 } });
    const broke = await send(user.anthropicHeaders, { ...body, max_tokens: 100_000 });
    expect(broke.statusCode).toBe(402);
    expect(broke.json().error.type).toBe('billing_error');
    expect(broke.headers['x-ladder-error-code']).toBe('quota_exceeded');
  });

  it('a Messages call is a ledger row of the model, like chat', async () => {
    const user = await userWith('openai');
    openai.script({ kind: 'reply', content: 'ok', usage: { prompt: 9, completion: 2 } });
    expect((await send(user.anthropicHeaders, { model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).statusCode).toBe(200);
    let row: { requests: number; prompt_tokens: number; completion_tokens: number } | undefined;
    for (let i = 0; i < 50 && !row; i++) {
      const usage = await t.app.inject({ method: 'GET', url: '/v1/usage?group_by=model', headers: user.headers });
      row = usage.json().data.find((r: { group: string }) => r.group === 'gpt-4o-mini');
      if (!row) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(row).toMatchObject({ requests: 1, prompt_tokens: 9, completion_tokens: 2 });
  });
});
