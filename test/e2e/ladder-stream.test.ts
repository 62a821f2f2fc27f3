// Streamed ladder runs end to end (issue 21, item 8): the official openai client over the real
// TLS listener, a fake OpenAI streaming on a real socket. The answer's last call is relayed
// live when it can be, else the answer comes whole; a run that fails ends with the error event.
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import type { LadderConfig } from '../../src/ladders/language/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { createUser, LogCapture, testConfig } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';
import { minimalLadder } from '../ladders/examples.js';

const KEY = 'sk-ladder-stream-0123456789';
const MODEL = 'gpt-4o-mini';
const KEEP_ALIVE_MS = 100;

let server: RunningServer;
let database: Database;
let fake: FakeVendor;
const tls = new Agent({ connect: { rejectUnauthorized: false } });

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: KEY });
  database = await openTestDatabase();
  const config = testConfig({
    PORT: '0',
    PROVIDER_BASE_URL_OPENAI: fake.baseUrl,
    ALLOW_PRIVATE_ENDPOINTS: 'true',
    SSE_KEEPALIVE_MS: String(KEEP_ALIVE_MS),
    USAGE_FLUSH_MS: '600000',
    WORKER_CONCURRENCY: '0',
    LADDER_MAX_CONCURRENT_CALLS: '1',
  });
  server = await startServer(config, { logStream: new LogCapture(), database });
});

afterAll(async () => {
  await server?.close();
  await database?.close();
  await fake?.close();
  await tls.close();
});

beforeEach(() => fake.reset());

const oneStep = (extra: Record<string, unknown> = {}): LadderConfig => ({
  name: 'One step',
  exit: 'answer',
  steps: [{ id: 'answer', name: 'Answer', type: 'normal', fields: [{ name: 'Question', type: 'text', from: 'input.context' }], systemPrompt: 'Answer.', ...extra }],
});

/** A user with an openai connection to the fake, a saved ladder, and a client. */
async function setUp(config: LadderConfig = minimalLadder) {
  const user = await createUser(server.app);
  const added = await server.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: KEY } });
  expect(added.statusCode).toBe(201);
  const saved = await server.app.inject({ method: 'PUT', url: `/v1/${user.username}/l`, headers: user.headers, payload: { config } });
  expect(saved.statusCode, saved.body).toBe(201);
  const client = new OpenAI({
    apiKey: user.key,
    baseURL: `${server.url}/v1/${user.username}/l`,
    maxRetries: 0,
    timeout: 10_000,
    fetch: undiciFetch as unknown as typeof fetch,
    fetchOptions: { dispatcher: tls } as Record<string, unknown>,
  });
  return { ...user, client, name: `${user.username}/l` };
}

type User = Awaited<ReturnType<typeof setUp>>;

async function rawStream(user: User, body: Record<string, unknown>) {
  const res = await request(`${server.url}/v1/${user.name}/chat/completions`, {
    method: 'POST',
    dispatcher: tls,
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Why?' }], stream: true, ...body }),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

const dataOf = (text: string) => text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
const contentOf = (data: string[]) => data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d).choices?.[0]?.delta?.content ?? '').join('');

async function instance(id: string) {
  const [row] = await database.query<{ status: string; answer: string | null; usage: Record<string, number> | null; model_calls: number; trace: Array<{ stepId: string; nodes: Array<{ output: string; provider: string | null }> }> | null; error: { code: string } | null }>(
    'select status, answer, usage, model_calls, trace, error from instances where id = $1', [id]);
  return row!;
}

async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  for (const start = Date.now(); !(await check()); ) {
    if (Date.now() - start > ms) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const why = [{ role: 'user' as const, content: 'Why?' }];
/** The fake's echo of a request: the answer a call of it gets. */
const echoOf = (i: number) => `echo: ${fake.requests[i]!.body.messages[0].content as string}`;

describe('streamed ladder runs', () => {
  it('for await over create({stream: true}): our id and model on every chunk, the last call relayed from a streamed vendor call', async () => {
    const user = await setUp();
    const { data: stream, response } = await user.client.chat.completions.create({ model: MODEL, messages: why, stream: true }).withResponse();
    const instanceId = response.headers.get('x-ladder-instance')!;
    expect(instanceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    // draft answered whole, refine (the exit, one node) streamed.
    expect(fake.requests.map((r) => r.body.stream ?? false)).toEqual([false, true]);
    const answer = echoOf(1);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(answer);
    for (const c of chunks) {
      expect(c.id).toBe(`ldr-${instanceId}`);
      expect(c.object).toBe('chat.completion.chunk');
      expect(c.model).toBe(user.name);
      expect('usage' in c).toBe(false);
    }
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    // The vendor's pieces (4 characters) came through one by one.
    expect(chunks.length).toBe(1 + Math.ceil(answer.length / 4) + 1);
    expect(chunks.at(-1)!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    // The run is an instance as a run answered whole: recorded, traced, metered.
    const row = await instance(instanceId);
    expect(row).toMatchObject({ status: 'completed', answer, model_calls: 2 });
    expect(row.trace!.map((t) => [t.stepId, t.nodes[0]!.output, t.nodes[0]!.provider])).toEqual([['draft', echoOf(0), 'openai'], ['refine', answer, 'openai']]);
    await server.app.usageLedger.flush();
    const rows = await database.query<{ ladder: string; instance_id: string; outcome: string; completion_tokens: number }>('select ladder, instance_id, outcome, completion_tokens from usage_records where account_id = $1 order by id', [user.id]);
    expect(rows.map((r) => [r.ladder, r.instance_id, r.outcome, Number(r.completion_tokens)])).toEqual([
      [user.name, instanceId, 'ok', echoOf(0).length],
      [user.name, instanceId, 'ok', answer.length],
    ]);
  });

  it('chat.completions.stream(): finalChatCompletion() has the answer', async () => {
    const user = await setUp();
    const final = await user.client.chat.completions.stream({ model: MODEL, messages: why }).finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe(echoOf(1));
    expect(final.choices[0]!.finish_reason).toBe('stop');
    expect(final.model).toBe(user.name);
  });

  it('relays the last call live: the client has its first piece before the vendor finished', async () => {
    const user = await setUp(oneStep());
    fake.script({ kind: 'stream-slow', intervalMs: 150, content: 'one two three four five six' });
    const stream = await user.client.chat.completions.create({ model: MODEL, messages: why, stream: true });
    let text = '';
    let vendorDoneAtFirstPiece: boolean | null = null;
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta.content ?? '';
      if (piece !== '' && vendorDoneAtFirstPiece === null) vendorDoneAtFirstPiece = fake.requests[0]!.answeredAt !== undefined;
      text += piece;
    }
    expect(vendorDoneAtFirstPiece).toBe(false);
    expect(text).toBe('one two three four five six');
  });

  it.each([
    ['an exit of two nodes', oneStep({ nodes: 2 })],
    ['a gated exit', oneStep({ continueIf: 'YES' })],
  ])('%s: the answer in one content chunk, no vendor call streamed', async (_, config) => {
    const user = await setUp(config);
    fake.script({ kind: 'reply', content: 'YES' }, { kind: 'reply', content: 'YES' });
    const res = await rawStream(user, {});
    expect(res.status).toBe(200);
    const data = dataOf(res.text);
    expect(fake.requests.every((r) => r.body.stream === undefined)).toBe(true);
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(data.at(-1)).toBe('[DONE]');
    expect((await instance(res.headers['x-ladder-instance'] as string)).answer).toBe('YES');
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([{ role: 'assistant', content: '' }, { content: 'YES' }, {}]);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
  });

  it('include_usage: a last chunk with the usage of every call of the run', async () => {
    const user = await setUp();
    const res = await rawStream(user, { stream_options: { include_usage: true } });
    const data = dataOf(res.text);
    expect(data.at(-1)).toBe('[DONE]');
    const usage = JSON.parse(data.at(-2)!);
    expect(usage.choices).toEqual([]);
    expect(usage.id).toBe(`ldr-${res.headers['x-ladder-instance'] as string}`);
    const row = await instance(res.headers['x-ladder-instance'] as string);
    const prompts = [0, 1].map((i) => (fake.requests[i]!.body.messages[0].content as string).length);
    const completions = [0, 1].map((i) => echoOf(i).length);
    const expected = { prompt_tokens: prompts[0]! + prompts[1]!, completion_tokens: completions[0]! + completions[1]! };
    expect(usage.usage).toMatchObject({ ...expected, total_tokens: expected.prompt_tokens + expected.completion_tokens });
    expect(row.usage).toMatchObject(expected);
    // No other chunk carries usage.
    expect(data.slice(0, -2).every((d) => !('usage' in JSON.parse(d)))).toBe(true);
  });

  it('a run that fails ends with the error event and no [DONE]: before the last call, and during it', async () => {
    const user = await setUp();
    fake.script({ kind: 'error', status: 400, message: 'bad draft' });
    const early = await rawStream(user, {});
    expect(early.status).toBe(200);
    const earlyData = dataOf(early.text);
    expect(earlyData).not.toContain('[DONE]');
    expect(JSON.parse(earlyData.at(-1)!)).toEqual({ error: { message: expect.stringContaining('bad draft'), type: 'invalid_request_error', code: 'provider_rejected_request', param: null } });
    expect((await instance(early.headers['x-ladder-instance'] as string)).status).toBe('failed');

    fake.reset();
    fake.script({ kind: 'reply', content: 'draft' }, { kind: 'stream-error', after: 3, message: 'vendor broke' });
    const cut = await rawStream(user, {});
    const data = dataOf(cut.text);
    expect(data).not.toContain('[DONE]');
    expect(contentOf(data.slice(0, -1)).length).toBeGreaterThan(0);
    const last = JSON.parse(data.at(-1)!);
    expect(last.error).toMatchObject({ type: 'execution_error', code: 'step_failed', param: null });
    expect(last.error.message).toContain('Step "refine" failed: The stream was cut before the answer was complete');
    const row = await instance(cut.headers['x-ladder-instance'] as string);
    expect(row.status).toBe('failed');
    expect(row.error!.code).toBe('step_failed');
  });

  it('the SDK raises a failing run’s error event', async () => {
    const user = await setUp();
    fake.script({ kind: 'error', status: 400, message: 'bad draft' });
    const stream = await user.client.chat.completions.create({ model: MODEL, messages: why, stream: true });
    await expect((async () => {
      for await (const chunk of stream) void chunk;
    })()).rejects.toThrow(/bad draft/);
  });

  it('a client that leaves cancels the run and closes the vendor connection', async () => {
    const user = await setUp();
    fake.script({ kind: 'reply', content: 'draft' }, { kind: 'stream-long', chunks: 1000, intervalMs: 20 });
    const controller = new AbortController();
    const { data: stream, response } = await user.client.chat.completions.create({ model: MODEL, messages: why, stream: true }, { signal: controller.signal }).withResponse();
    const instanceId = response.headers.get('x-ladder-instance')!;
    let seen = 0;
    try {
      for await (const chunk of stream) {
        seen += chunk.choices[0]?.delta.content?.length ?? 0;
        if (seen >= 20) controller.abort();
      }
    } catch {
      // the SDK's abort error
    }
    await until(() => fake.requests[1]?.clientClosed === true);
    await until(async () => (await instance(instanceId)).status !== 'running');
    const row = await instance(instanceId);
    expect(row.status).toBe('cancelled');
    expect(row.error!.code).toBe('run_cancelled');
    expect(fake.requests[1]!.streamedEvents).toBeLessThan(1000);
  });

  it('keep-alive comments while an earlier step runs', async () => {
    const user = await setUp();
    fake.script({ kind: 'delay', ms: KEEP_ALIVE_MS * 5 });
    const res = await rawStream(user, {});
    const beforeAnswer = res.text.slice(0, res.text.indexOf('"content":"echo'));
    expect(beforeAnswer.match(/\n\n: keep-alive\n\n/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(dataOf(res.text).at(-1)).toBe('[DONE]');
  });

  it('refusals before the run exists stay JSON errors', async () => {
    const user = await setUp();
    const missing = await rawStream({ ...user, name: `${user.username}/nope` }, {});
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toContain('application/json');
    expect(JSON.parse(missing.text).error.code).toBe('ladder_not_found');
    const badKnobs = await rawStream(user, { max_tokens: 5 });
    expect(badKnobs.status).toBe(400);
    expect(JSON.parse(badKnobs.text).error.code).toBe('unsupported_parameter');
    expect(badKnobs.headers['x-ladder-instance']).toBeUndefined();
    expect(fake.requests).toHaveLength(0);
  });

  it('background runs keep refusing stream: true', async () => {
    const user = await setUp();
    const res = await server.app.inject({ method: 'POST', url: '/v1/pipelines/instances', headers: user.headers, payload: { author: user.username, template: 'l', model: MODEL, messages: why, stream: true } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('stream_not_supported');
  });
});
