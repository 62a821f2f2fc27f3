// GET /v1/pipelines/instances/{id}/events: a run's events as Server-Sent Events. Runs are
// simulated by writing instance and event rows as a runner would (test/helpers/instance-events.ts).
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EVENTS_CHANNEL } from '../../src/services/instance-events.js';
import { build, createUser, type TestApp } from '../helpers/build.js';
import { appendEvents, finishInstance, gateLoopRecursionRun, insertInstance, nodeCompleted } from '../helpers/instance-events.js';
import { eventsOf, openStream, parseSse, type LiveStream } from '../helpers/sse.js';

type User = Awaited<ReturnType<typeof createUser>>;
const eventsUrl = (id: string) => `/v1/pipelines/instances/${id}/events`;
const json = (data: string | undefined) => JSON.parse(data ?? 'null') as Record<string, any>;

async function listen(testApp: TestApp): Promise<string> {
  await testApp.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;
}

describe('event stream of a finished run', () => {
  let t: TestApp;
  let user: User;
  let instanceId: string;
  beforeAll(async () => {
    t = await build({ WORKER_CONCURRENCY: '0' });
    user = await createUser(t.app);
    instanceId = await insertInstance(t.database, { accountId: user.id, author: user.username, slug: 'thinker', knobs: { passes: 2, depth: 1 }, stepsTotal: 4 });
    await appendEvents(t.database, instanceId, gateLoopRecursionRun());
    await finishInstance(t.database, instanceId, { status: 'completed', answer: 'Forty-two.' }, {
      usage: { prompt_tokens: 900, completion_tokens: 220, total_tokens: 1120 }, spendNanos: 2_100_000, modelCalls: 22,
    });
  });
  afterAll(() => t?.close());

  it('sends every event in seq order with its type and data, then the instance as GET shows it, then ends', async () => {
    const res = await t.app.inject({ method: 'GET', url: eventsUrl(instanceId), headers: user.headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache, no-transform');
    const events = eventsOf(parseSse(res.body).messages);
    const expected = gateLoopRecursionRun();
    expect(events.map((e) => e.event)).toEqual(expected.map((e) => e.type));
    expect(events.map((e) => Number(e.id))).toEqual(expected.map((_, i) => i + 1));

    // Non-terminal events carry their data as written, plus when it was recorded.
    for (const [i, event] of events.slice(0, -1).entries()) {
      const { at, ...data } = json(event.data);
      expect(data).toEqual(expected[i]!.data);
      expect(new Date(at).toISOString()).toBe(at);
    }
    // The gate, the passes and the recursion are all visible, in the order they ran.
    const steps = events.filter((e) => e.event === 'step.started').map((e) => json(e.data)).map((d) => `${d.step}@${d.pass}.${d.depth}`);
    expect(steps).toEqual([
      'draft@1.0', 'judge@1.0', 'deepen@1.0', 'draft@1.1', 'judge@1.1', 'deepen@1.1', 'polish@1.0',
      'draft@2.0', 'judge@2.0', 'deepen@2.0', 'draft@1.1', 'judge@1.1', 'deepen@1.1', 'polish@2.0',
    ]);
    const pruned = events.filter((e) => e.event === 'node.completed' && json(e.data).survived === false).map((e) => json(e.data));
    expect(pruned).toHaveLength(4);
    expect(pruned.every((d) => d.step === 'judge' && d.node === 2)).toBe(true);

    const terminal = events.at(-1)!;
    expect(terminal.event).toBe('instance.completed');
    expect(json(terminal.data)).toMatchObject({
      instanceId,
      object: 'pipeline.instance',
      status: 'completed',
      mode: 'async',
      author: user.username,
      template: 'thinker',
      version: 1,
      model: 'gpt-4o-mini',
      knobs: { passes: 2, depth: 1 },
      progress: { model_calls: 22, steps_completed: 0, steps_total: 4 },
      usage: { prompt_tokens: 900, completion_tokens: 220, total_tokens: 1120 },
      spend_usd: 0.0021,
      result: {
        id: `ldr-${instanceId}`, object: 'chat.completion', model: `${user.username}/thinker`,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Forty-two.' }, finish_reason: 'stop' }],
      },
      error: null,
    });
    // Nothing follows the terminal event.
    expect(res.body.endsWith(`data: ${terminal.data}\n\n`)).toBe(true);
  });

  it('resumes after Last-Event-ID with exactly the later events', async () => {
    const res = await t.app.inject({ method: 'GET', url: eventsUrl(instanceId), headers: { ...user.headers, 'last-event-id': '17' } });
    expect(res.statusCode).toBe(200);
    const events = eventsOf(parseSse(res.body).messages);
    const total = gateLoopRecursionRun().length;
    expect(events.map((e) => Number(e.id))).toEqual(Array.from({ length: total - 17 }, (_, i) => 18 + i));
    expect(events.at(-1)!.event).toBe('instance.completed');
  });

  it('sends only the terminal event to a client that already has everything else', async () => {
    const total = gateLoopRecursionRun().length;
    const res = await t.app.inject({ method: 'GET', url: eventsUrl(instanceId), headers: { ...user.headers, 'last-event-id': String(total - 1) } });
    expect(eventsOf(parseSse(res.body).messages).map((e) => [e.id, e.event])).toEqual([[String(total), 'instance.completed']]);
  });

  it('answers 400 invalid_last_event_id for a Last-Event-ID that is not an event id', async () => {
    const res = await t.app.inject({ method: 'GET', url: eventsUrl(instanceId), headers: { ...user.headers, 'last-event-id': 'abc' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'invalid_last_event_id', type: 'invalid_request_error', param: 'Last-Event-ID' });
  });
});

describe('who may watch', () => {
  let t: TestApp;
  let owner: User;
  let other: User;
  let instanceId: string;
  beforeAll(async () => {
    t = await build({ WORKER_CONCURRENCY: '0' });
    owner = await createUser(t.app);
    other = await createUser(t.app);
    instanceId = await insertInstance(t.database, { accountId: owner.id, status: 'pending' });
  });
  afterAll(() => t?.close());

  it.each([
    ['another account’s instance', () => instanceId, () => other.headers],
    ['an unknown id', () => '00000000-0000-4000-8000-000000000000', () => owner.headers],
    ['a malformed id', () => 'not-a-uuid', () => owner.headers],
  ])('answers 404 instance_not_found for %s', async (_name, id, headers) => {
    const res = await t.app.inject({ method: 'GET', url: eventsUrl(id()), headers: headers() });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { message: `Instance "${id()}" was not found.`, type: 'invalid_request_error', code: 'instance_not_found', param: null } });
  });

  it('answers 401 without an API key', async () => {
    const res = await t.app.inject({ method: 'GET', url: eventsUrl(instanceId) });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.type).toBe('authentication_error');
  });

  it('is declared in the OpenAPI document as producing text/event-stream', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const op = doc.paths['/v1/pipelines/instances/{id}/events'].get;
    expect(Object.keys(op.responses[200].content)).toEqual(['text/event-stream']);
    expect(op.responses[404]).toBeDefined();
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['id', 'last-event-id']));
  });
});

describe('finished runs without a terminal event', () => {
  let t: TestApp;
  let user: User;
  beforeAll(async () => {
    t = await build({ WORKER_CONCURRENCY: '0' });
    user = await createUser(t.app);
  });
  afterAll(() => t?.close());

  it('makes the terminal event up from the row, numbered after the last recorded one', async () => {
    const id = await insertInstance(t.database, { accountId: user.id });
    await appendEvents(t.database, id, [{ type: 'instance.started' }, { type: 'step.started', data: { step: 'a', pass: 1, depth: 0 } }]);
    await finishInstance(t.database, id, { status: 'failed', error: { status: 502, type: 'execution_error', code: 'step_failed', message: 'Step "a" failed.' } });
    await t.database.query(`update instances set finished_at = now() - interval '1 minute' where id = $1`, [id]);
    const res = await t.app.inject({ method: 'GET', url: eventsUrl(id), headers: user.headers });
    const events = eventsOf(parseSse(res.body).messages);
    expect(events.map((e) => [e.id, e.event])).toEqual([['1', 'instance.started'], ['2', 'step.started'], ['3', 'instance.failed']]);
    expect(json(events[2]!.data)).toMatchObject({
      status: 'failed', result: null, error: { status: 502, type: 'execution_error', code: 'step_failed', message: 'Step "a" failed.' },
    });
  });

  it('rebuilds the history of a run that recorded no events from its trace, marked as reconstructed', async () => {
    const id = await insertInstance(t.database, { accountId: user.id, mode: 'sync' });
    const node = (n: number, survived: boolean, latencyMs: number) => ({
      node: n, prompt: `p${n}`, promptChars: 2, output: survived ? 'YES' : 'NO', survived, provider: 'openai',
      usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 }, costNanos: 0.001, latencyMs,
    });
    const trace = [
      { pass: 1, depth: 0, stepId: 'judge', nodes: [node(1, true, 300), node(2, false, 100)] },
      { pass: 1, depth: 0, stepId: 'answer', nodes: [node(1, true, 50)] },
    ];
    await finishInstance(t.database, id, { status: 'completed', answer: 'YES' }, { trace });
    await t.database.query(`update instances set finished_at = now() - interval '1 minute' where id = $1`, [id]);
    const res = await t.app.inject({ method: 'GET', url: eventsUrl(id), headers: user.headers });
    const events = eventsOf(parseSse(res.body).messages);
    expect(events.map((e) => e.event)).toEqual([
      'instance.started', 'step.started', 'node.completed', 'node.completed', 'step.completed',
      'step.started', 'node.completed', 'step.completed', 'instance.completed',
    ]);
    expect(events.map((e) => e.id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
    // The faster node finished first; times follow the latencies.
    const [fast, slow] = [json(events[2]!.data), json(events[3]!.data)];
    expect(fast).toMatchObject({ step: 'judge', node: 2, survived: false, latency_ms: 100, reconstructed: true, prompt_excerpt: 'p2', output_excerpt: 'NO' });
    expect(Date.parse(slow.at) - Date.parse(fast.at)).toBe(200);
    expect(json(events[4]!.data)).toMatchObject({ step: 'judge', survivors: [1] });
    expect(json(events[8]!.data)).toMatchObject({ instanceId: id, status: 'completed', mode: 'sync' });
  });
});

describe.each([
  ['watched on one app, written from another sharing the database', true],
  ['watched and written through the same app', false],
])('a live run %s', (_name, twoApps) => {
  let watcher: TestApp;
  let writer: TestApp;
  let base: string;
  let user: User;
  const streams: LiveStream[] = [];
  beforeAll(async () => {
    watcher = await build({ SSE_POLL_MS: '50', WORKER_CONCURRENCY: '0' });
    writer = twoApps ? await build({ WORKER_CONCURRENCY: '0' }, { database: watcher.database }) : watcher;
    base = await listen(watcher);
    user = await createUser(watcher.app);
  });
  afterEach(() => streams.splice(0).forEach((s) => s.close()));
  afterAll(async () => {
    if (twoApps) await writer?.close();
    await watcher?.close();
  });

  it('streams events as they are written, in order, and ends after the terminal event', async () => {
    const id = await insertInstance(writer.database, { accountId: user.id, status: 'pending' });
    const stream = await openStream(`${base}${eventsUrl(id)}`, user.headers);
    streams.push(stream);
    expect(stream.status).toBe(200);
    await appendEvents(writer.database, id, [{ type: 'instance.started' }, { type: 'step.started', data: { step: 'judge', pass: 1, depth: 0 } }]);
    await stream.until((m) => eventsOf(m).length === 2);
    await appendEvents(writer.database, id, [nodeCompleted('judge', 1, 0, 1), nodeCompleted('judge', 1, 0, 2, false)]);
    await stream.until((m) => eventsOf(m).length === 4);
    await finishInstance(writer.database, id, { status: 'completed', answer: 'done' });
    await appendEvents(writer.database, id, [{ type: 'step.completed', data: { step: 'judge', pass: 1, depth: 0, survivors: [1] } }, { type: 'instance.completed' }]);
    await stream.ended;
    const events = eventsOf(stream.messages);
    expect(events.map((e) => [e.id, e.event])).toEqual([
      ['1', 'instance.started'], ['2', 'step.started'], ['3', 'node.completed'], ['4', 'node.completed'], ['5', 'step.completed'], ['6', 'instance.completed'],
    ]);
    expect(json(events[5]!.data)).toMatchObject({ status: 'completed', result: { choices: [{ message: { content: 'done' } }] } });
  });

  it('gives a client that reconnects with Last-Event-ID exactly the events it missed', async () => {
    const id = await insertInstance(writer.database, { accountId: user.id });
    await appendEvents(writer.database, id, [{ type: 'instance.started' }, { type: 'step.started', data: { step: 'a', pass: 1, depth: 0 } }]);
    const first = await openStream(`${base}${eventsUrl(id)}`, user.headers);
    streams.push(first);
    await first.until((m) => eventsOf(m).length === 2);
    first.close();
    await appendEvents(writer.database, id, [nodeCompleted('a', 1, 0, 1), { type: 'step.completed', data: { step: 'a', pass: 1, depth: 0, survivors: [1] } }]);
    const again = await openStream(`${base}${eventsUrl(id)}`, { ...user.headers, 'last-event-id': eventsOf(first.messages).at(-1)!.id! });
    streams.push(again);
    await again.until((m) => eventsOf(m).length === 2);
    await appendEvents(writer.database, id, [{ type: 'instance.cancelled' }]);
    await finishInstance(writer.database, id, { status: 'cancelled', error: { status: 499, type: 'invalid_request_error', code: 'run_cancelled', message: 'Cancelled.' } });
    await again.ended;
    expect(eventsOf(again.messages).map((e) => [e.id, e.event])).toEqual([['3', 'node.completed'], ['4', 'step.completed'], ['5', 'instance.cancelled']]);
    expect(json(eventsOf(again.messages)[2]!.data)).toMatchObject({ status: 'cancelled', error: { code: 'run_cancelled' } });
  });
});

describe('waking, keep-alive and limits', () => {
  let t: TestApp;
  let base: string;
  let user: User;
  const streams: LiveStream[] = [];
  beforeAll(async () => {
    // Polling so slow that only a NOTIFY can deliver events within the test's time.
    t = await build({ SSE_POLL_MS: '60000', SSE_KEEPALIVE_MS: '300', SSE_MAX_STREAMS: '2', SSE_MAX_STREAMS_PER_ACCOUNT: '3', WORKER_CONCURRENCY: '0' });
    base = await listen(t);
    user = await createUser(t.app);
  });
  afterEach(() => streams.splice(0).forEach((s) => s.close()));
  afterAll(() => t?.close());

  it('delivers events at once when the writer announces them on the events channel', async () => {
    const id = await insertInstance(t.database, { accountId: user.id });
    const stream = await openStream(`${base}${eventsUrl(id)}`, user.headers);
    streams.push(stream);
    // The stream's first bytes come once its LISTEN is in place.
    await stream.until((m) => m.length >= 1);
    await appendEvents(t.database, id, [{ type: 'instance.started' }], { notify: true });
    await stream.until((m) => eventsOf(m).length === 1, 5_000);
  });

  it('sends a keep-alive comment on a quiet stream', async () => {
    const id = await insertInstance(t.database, { accountId: user.id, status: 'pending' });
    const stream = await openStream(`${base}${eventsUrl(id)}`, user.headers);
    streams.push(stream);
    const messages = await stream.until((m) => m.filter((x) => x.comments.includes('keep-alive')).length >= 2, 5_000);
    expect(eventsOf(messages)).toEqual([]);
  });

  it('answers 503 too_many_streams beyond SSE_MAX_STREAMS, and frees the slot when a client leaves', async () => {
    const id = await insertInstance(t.database, { accountId: user.id, status: 'pending' });
    const spy = vi.spyOn(t.app.instanceEvents, 'after');
    const a = await openStream(`${base}${eventsUrl(id)}`, user.headers);
    const b = await openStream(`${base}${eventsUrl(id)}`, user.headers);
    streams.push(a, b);
    const refused = await openStream(`${base}${eventsUrl(id)}`, user.headers);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(JSON.parse(await refused.text())).toEqual({
      error: { message: 'This server is serving as many event streams as it may; retry shortly.', type: 'api_error', code: 'too_many_streams', param: null },
    });
    a.close();
    b.close();
    // Once the clients are gone their streams stop reading and their slots are free again.
    await vi.waitFor(async () => {
      const res = await openStream(`${base}${eventsUrl(id)}`, user.headers);
      res.close();
      expect(res.status).toBe(200);
    }, { timeout: 5_000, interval: 100 });
    await new Promise((r) => setTimeout(r, 300));
    const calls = spy.mock.calls.length;
    await new Promise((r) => setTimeout(r, 800));
    expect(spy.mock.calls.length).toBe(calls);
    spy.mockRestore();
  });
});

describe('a stream opened while the LISTEN is still being set up', () => {
  let t: TestApp;
  let base: string;
  let user: User;
  let stream: LiveStream | undefined;
  beforeAll(async () => {
    // A fresh app: no stream has made it LISTEN yet. Polling too slow to matter.
    t = await build({ SSE_POLL_MS: '60000', WORKER_CONCURRENCY: '0' });
    base = await listen(t);
    user = await createUser(t.app);
  });
  afterAll(async () => {
    stream?.close();
    await t?.close();
  });

  it('reads only once it listens, so an event announced in the meantime is not left to the poll', async () => {
    const id = await insertInstance(t.database, { accountId: user.id });
    const steps: string[] = [];
    let listenAsked!: () => void;
    const asked = new Promise<void>((resolve) => (listenAsked = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const listenNow = t.app.database.listen.bind(t.app.database);
    const listenSpy = vi.spyOn(t.app.database, 'listen').mockImplementation(async (channel, handler) => {
      if (channel !== EVENTS_CHANNEL) return listenNow(channel, handler);
      listenAsked();
      await released;
      const unlisten = await listenNow(channel, handler);
      steps.push('listening');
      return unlisten;
    });
    const readNow = t.app.instanceEvents.after.bind(t.app.instanceEvents);
    const readSpy = vi.spyOn(t.app.instanceEvents, 'after').mockImplementation((...args) => {
      steps.push('read');
      return readNow(...args);
    });
    try {
      const opening = openStream(`${base}${eventsUrl(id)}`, user.headers);
      await asked;
      // Announced before anyone listens: only a read after the LISTEN is in place finds it soon.
      await appendEvents(t.database, id, [{ type: 'instance.started' }], { notify: true });
      release();
      stream = await opening;
      await stream.until((m) => eventsOf(m).length === 1, 5_000);
      expect(eventsOf(stream.messages).map((e) => [e.id, e.event])).toEqual([['1', 'instance.started']]);
      expect(steps[0]).toBe('listening');
    } finally {
      listenSpy.mockRestore();
      readSpy.mockRestore();
    }
  });
});
