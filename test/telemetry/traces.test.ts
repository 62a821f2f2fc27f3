// OpenTelemetry traces in process (issue 23, part 3): the spans an in-memory exporter receives
// for direct calls, fallbacks, streams, ladder runs and background runs, W3C traceparent, and
// what never goes into a span (keys; content unless OTEL_CAPTURE_CONTENT=true).
import { execFileSync } from 'node:child_process';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nanosToUsd } from '../../src/money.js';
import { costOf, createPriceTable } from '../../src/pricing/prices.js';
import { startTelemetry, type Telemetry } from '../../src/telemetry/telemetry.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, type TestApp } from '../helpers/build.js';
import { waitFor, waitForStatus } from '../helpers/instances.js';
import { minimalLadder } from '../ladders/examples.js';

const MODEL = 'gpt-4o-mini';
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';

const hello = [{ role: 'user' as const, content: 'Hello there' }];
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const traceOf = (span: ReadableSpan) => span.spanContext().traceId;

interface Setup {
  exporter: InMemorySpanExporter;
  telemetry: Telemetry;
  t: TestApp;
  primary: FakeVendor;
  backup: FakeVendor;
  close(): Promise<void>;
}

async function setup(captureContent: boolean, env: Record<string, string> = {}): Promise<Setup> {
  const exporter = new InMemorySpanExporter();
  const telemetry = await startTelemetry({ protocol: 'http/protobuf', captureContent }, exporter);
  const primary = await startFakeOpenAI({ apiKey: 'sk-trace-primary-secret-1111' });
  const backup = await startFakeOpenAI({ apiKey: 'sk-trace-backup-secret-2222' });
  const t = await build(
    { PROVIDER_BASE_URL_OPENAI: primary.baseUrl, PROVIDER_BASE_URL_OPENROUTER: backup.baseUrl, BREAKER_FAILURE_THRESHOLD: '100', ...env },
    { telemetry },
  );
  return {
    exporter, telemetry, t, primary, backup,
    async close() {
      await t.close();
      await telemetry.shutdown();
      await primary.close();
      await backup.close();
    },
  };
}

async function userWith(s: Setup, connections: Array<'openai' | 'openrouter'>) {
  const user = await createUser(s.t.app);
  for (const [i, provider] of connections.entries()) {
    const api_key = provider === 'openai' ? s.primary.apiKey : s.backup.apiKey;
    const res = await s.t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider, api_key, priority: i * 10 } });
    expect(res.statusCode, res.body).toBe(201);
  }
  return user;
}

function spansNamed(exporter: InMemorySpanExporter, name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.name === name);
}

describe('traces with tracing on', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(false, { WORKER_CONCURRENCY: '1', WORKER_POLL_MS: '100', LADDER_MAX_CONCURRENT_CALLS: '1' });
  });
  afterAll(() => s.close());
  beforeEach(() => {
    s.exporter.reset();
    s.primary.reset();
    s.backup.reset();
  });

  it('a direct call is a server span named by its route, with the vendor attempt as its client child (GenAI conventions, cost)', async () => {
    const user = await userWith(s, ['openai']);
    s.primary.script({ kind: 'reply', content: 'Hi!', usage: { prompt: 12, completion: 5 } });
    s.exporter.reset();
    const res = await s.t.app.inject({ method: 'POST', url: '/v1/chat/completions?debug=1', headers: { ...user.headers, 'user-agent': 'trace-test/1' }, payload: { model: MODEL, messages: hello, max_tokens: 50 } });
    expect(res.statusCode).toBe(200);

    const [server] = spansNamed(s.exporter, 'POST /v1/chat/completions');
    const [attempt] = spansNamed(s.exporter, `chat ${MODEL}`);
    expect(server!.kind).toBe(SpanKind.SERVER);
    expect(server!.attributes).toEqual({
      'http.request.method': 'POST',
      'url.path': '/v1/chat/completions',
      'url.scheme': 'http',
      'network.protocol.version': '1.1',
      'client.address': '127.0.0.1',
      'user_agent.original': 'trace-test/1',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
    });
    expect(server!.status.code).toBe(SpanStatusCode.UNSET);
    expect(parentOf(server!)).toBeUndefined();

    expect(attempt!.kind).toBe(SpanKind.CLIENT);
    expect(parentOf(attempt!)).toBe(idOf(server!));
    expect(traceOf(attempt!)).toBe(traceOf(server!));
    const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
    expect(attempt!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': MODEL,
      'ladder.provider': 'openai',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(s.primary.url).port),
      'gen_ai.request.max_tokens': 50,
      'http.response.status_code': 200,
      'ladder.vendor_request_id': expect.any(String),
      'gen_ai.response.model': expect.any(String),
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 5,
      'ladder.cost_usd': nanosToUsd(costOf(MODEL, usage, createPriceTable())),
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(attempt!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('honours the client\'s W3C traceparent: the server span is its child, in its trace', async () => {
    const user = await userWith(s, ['openai']);
    s.exporter.reset();
    const res = await s.t.app.inject({ method: 'GET', url: '/v1/models', headers: { ...user.headers, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } });
    expect(res.statusCode).toBe(200);
    const [server] = spansNamed(s.exporter, 'GET /v1/models');
    expect(traceOf(server!)).toBe(CLIENT_TRACE);
    expect(parentOf(server!)).toBe(CLIENT_SPAN);
  });

  it('a request that matched no route is named by its method alone, with its 404', async () => {
    s.exporter.reset();
    const res = await s.t.app.inject({ method: 'GET', url: '/v1/no/such/route/at/all' });
    expect(res.statusCode).toBe(404);
    const [server] = s.exporter.getFinishedSpans();
    expect(server!.name).toBe('GET');
    expect(server!.attributes['http.route']).toBeUndefined();
    expect(server!.attributes).toMatchObject({ 'url.path': '/v1/no/such/route/at/all', 'http.response.status_code': 404 });
    expect(server!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('fallback attempts are sibling spans: the failed one carries its reason and status, the answering one its usage', async () => {
    const user = await userWith(s, ['openai', 'openrouter']);
    s.primary.script({ kind: 'error', status: 500, message: 'primary down' });
    s.exporter.reset();
    const res = await s.t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: user.headers, payload: { model: MODEL, messages: hello } });
    expect(res.statusCode).toBe(200);
    const [server] = spansNamed(s.exporter, 'POST /v1/chat/completions');
    const attempts = s.exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.CLIENT);
    expect(attempts.map((a) => [a.attributes['ladder.provider'], a.status.code, a.attributes['error.type'] ?? null, a.attributes['http.response.status_code']])).toEqual([
      ['openai', SpanStatusCode.ERROR, 'server_error', 500],
      ['openrouter', SpanStatusCode.UNSET, null, 200],
    ]);
    expect(attempts.map(parentOf)).toEqual([idOf(server!), idOf(server!)]);
    expect(attempts[0]!.status.message).toBe('openai: primary down (HTTP 500)');
    expect(attempts[0]!.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
  });

  it('every attempt failing: the server span is an error with the answer\'s code', async () => {
    const user = await userWith(s, ['openai']);
    s.primary.script({ kind: 'error', status: 401, message: 'bad key' });
    s.exporter.reset();
    const res = await s.t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: user.headers, payload: { model: MODEL, messages: hello } });
    expect(res.statusCode).toBe(502);
    const [server] = spansNamed(s.exporter, 'POST /v1/chat/completions');
    expect(server!.status.code).toBe(SpanStatusCode.ERROR);
    expect(server!.attributes['http.response.status_code']).toBe(502);
    expect(server!.attributes['error.type']).toBe(res.json().error.code);
  });

  it('a stream\'s attempt span ends when the stream does, with the usage the stream reported', async () => {
    const user = await userWith(s, ['openai']);
    s.primary.script({ kind: 'reply', content: 'streamed words here', usage: { prompt: 7, completion: 3 } });
    const client = new OpenAI({ apiKey: user.key, baseURL: `${await s.t.app.listen({ port: 0, host: '127.0.0.1' })}/v1` });
    s.exporter.reset();
    const stream = await client.chat.completions.create({ model: MODEL, messages: hello, stream: true, stream_options: { include_usage: true } });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('streamed words here');
    const attempt = await waitFor(() => spansNamed(s.exporter, `chat ${MODEL}`)[0]);
    const [server] = await waitFor(() => spansNamed(s.exporter, 'POST /v1/chat/completions').length === 1 && spansNamed(s.exporter, 'POST /v1/chat/completions'));
    expect(attempt.attributes).toMatchObject({ 'ladder.stream.outcome': 'completed', 'gen_ai.usage.input_tokens': 7, 'gen_ai.usage.output_tokens': 3, 'http.response.status_code': 200 });
    expect(parentOf(attempt)).toBe(idOf(server!));
    // The attempt lasted as long as the stream: it ended after the first chunk was sent, within the
    // request. The SDK times a span from Date.now() at its start (whole milliseconds) plus the time
    // since, so two spans' clocks may disagree by up to a millisecond (an attempt ending 73 µs
    // "after" its request was seen under load).
    expect(attempt.endTime[0] * 1e9 + attempt.endTime[1]).toBeLessThanOrEqual(server!.endTime[0] * 1e9 + server!.endTime[1] + 1e6);
  });

  it('a ladder run is a span with its steps inside, each node inside its step and the vendor attempt inside the node', async () => {
    const user = await userWith(s, ['openai']);
    const saved = await s.t.app.inject({ method: 'PUT', url: `/v1/${user.username}/minimal`, headers: user.headers, payload: { config: minimalLadder } });
    expect(saved.statusCode).toBeLessThan(300);
    s.exporter.reset();
    const res = await s.t.app.inject({ method: 'POST', url: `/v1/${user.username}/minimal/chat/completions`, headers: user.headers, payload: { model: MODEL, messages: hello } });
    expect(res.statusCode, res.body).toBe(200);

    const [server] = spansNamed(s.exporter, 'POST /v1/:author/:ladder/chat/completions');
    const [run] = spansNamed(s.exporter, `ladder.run ${user.username}/minimal`);
    const steps = s.exporter.getFinishedSpans().filter((span) => span.name.startsWith('ladder.step '));
    const nodes = s.exporter.getFinishedSpans().filter((span) => span.name.startsWith('ladder.node '));
    const attempts = spansNamed(s.exporter, `chat ${MODEL}`);
    expect(parentOf(run!)).toBe(idOf(server!));
    expect(run!.attributes).toMatchObject({
      'ladder.name': `${user.username}/minimal`, 'ladder.run.mode': 'sync', 'ladder.run.attempt': 1, 'ladder.run.resumed': false,
      'gen_ai.request.model': MODEL, 'ladder.model_calls': 2, 'ladder.cost_usd': expect.any(Number),
    });
    expect(steps.map((step) => [step.name, step.attributes['ladder.step.id'], step.attributes['ladder.pass'], parentOf(step)])).toEqual([
      ['ladder.step draft', 'draft', 1, idOf(run!)],
      ['ladder.step refine', 'refine', 1, idOf(run!)],
    ]);
    expect(nodes.map((node) => [node.attributes['ladder.call_key'], parentOf(node)])).toEqual([
      ['1.draft.1', idOf(steps[0]!)],
      ['1.refine.1', idOf(steps[1]!)],
    ]);
    expect(attempts.map(parentOf)).toEqual(nodes.map(idOf));
    expect(new Set(s.exporter.getFinishedSpans().map(traceOf)).size).toBe(1);
  });

  it('a background run\'s span, started by the worker that claims it, is a trace of its own linked to the request that queued it', async () => {
    const user = await userWith(s, ['openai']);
    await s.t.app.inject({ method: 'PUT', url: `/v1/${user.username}/minimal`, headers: user.headers, payload: { config: minimalLadder } });
    s.exporter.reset();
    const res = await s.t.app.inject({
      method: 'POST', url: '/v1/pipelines/instances', headers: { ...user.headers, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
      payload: { author: user.username, template: 'minimal', model: MODEL, messages: hello },
    });
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json<{ instanceId: string }>().instanceId;
    const [queued] = await s.t.database.query<{ trace_parent: string }>('select trace_parent from instances where id = $1', [id]);
    const [server] = spansNamed(s.exporter, 'POST /v1/pipelines/instances');
    expect(queued!.trace_parent).toBe(`00-${CLIENT_TRACE}-${idOf(server!)}-01`);
    await waitForStatus(s.t.database, id, ['completed', 'failed']);
    const run = await waitFor(() => spansNamed(s.exporter, `ladder.run ${user.username}/minimal`)[0]);
    expect(run.kind).toBe(SpanKind.CONSUMER);
    expect(parentOf(run)).toBeUndefined();
    expect(traceOf(run)).not.toBe(CLIENT_TRACE);
    expect(run.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([[CLIENT_TRACE, idOf(server!)]]);
    expect(run.attributes).toMatchObject({ 'ladder.instance_id': id, 'ladder.run.mode': 'async', 'ladder.model_calls': 2 });
    const attempts = await waitFor(() => spansNamed(s.exporter, `chat ${MODEL}`).length === 2 && spansNamed(s.exporter, `chat ${MODEL}`));
    expect(attempts.map(traceOf)).toEqual([traceOf(run), traceOf(run)]);
  });

  it('a failed run\'s span is an error carrying the run\'s code', async () => {
    const user = await userWith(s, ['openai']);
    await s.t.app.inject({ method: 'PUT', url: `/v1/${user.username}/minimal`, headers: user.headers, payload: { config: minimalLadder } });
    s.primary.script({ kind: 'error', status: 400, message: 'no such thing' });
    s.exporter.reset();
    const res = await s.t.app.inject({ method: 'POST', url: `/v1/${user.username}/minimal/chat/completions`, headers: user.headers, payload: { model: MODEL, messages: hello } });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    const [run] = spansNamed(s.exporter, `ladder.run ${user.username}/minimal`);
    const [node] = s.exporter.getFinishedSpans().filter((span) => span.name === 'ladder.node draft');
    expect(run!.status.code).toBe(SpanStatusCode.ERROR);
    expect(run!.attributes['error.type']).toBe(res.json().error.code);
    expect(node!.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('without OTEL_CAPTURE_CONTENT no prompt, output, input or answer is in any span; no key ever is', async () => {
    const user = await userWith(s, ['openai', 'openrouter']);
    await s.t.app.inject({ method: 'PUT', url: `/v1/${user.username}/minimal`, headers: user.headers, payload: { config: minimalLadder } });
    s.primary.script({ kind: 'error', status: 401, message: `invalid key ${s.primary.apiKey}` });
    s.exporter.reset();
    await s.t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: user.headers, payload: { model: MODEL, messages: [{ role: 'user', content: 'secret prompt words' }] } });
    await s.t.app.inject({ method: 'POST', url: `/v1/${user.username}/minimal/chat/completions`, headers: user.headers, payload: { model: MODEL, messages: [{ role: 'user', content: 'secret ladder words' }] } });
    const exported = JSON.stringify(s.exporter.getFinishedSpans().map((span) => [span.name, span.attributes, span.status, span.events, span.links, span.resource.attributes]));
    expect(s.exporter.getFinishedSpans().length).toBeGreaterThan(5);
    for (const secret of [user.key, s.primary.apiKey, s.backup.apiKey, 'secret prompt words', 'secret ladder words', 'echo:']) expect(exported).not.toContain(secret);
  });
});

describe('traces with OTEL_CAPTURE_CONTENT=true', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(true, { LADDER_MAX_CONCURRENT_CALLS: '1' });
  });
  afterAll(() => s.close());

  it('prompts and outputs go into the attempt spans, a run\'s input and answer into its span; keys still never', async () => {
    const user = await userWith(s, ['openai']);
    await s.t.app.inject({ method: 'PUT', url: `/v1/${user.username}/minimal`, headers: user.headers, payload: { config: minimalLadder } });
    s.primary.script({ kind: 'reply', content: 'captured answer' });
    s.exporter.reset();
    await s.t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: user.headers, payload: { model: MODEL, messages: [{ role: 'user', content: 'captured prompt' }] } });
    const [attempt] = spansNamed(s.exporter, `chat ${MODEL}`);
    expect(JSON.parse(attempt!.attributes['gen_ai.input.messages'] as string)).toEqual([{ role: 'user', content: 'captured prompt' }]);
    expect(JSON.parse(attempt!.attributes['gen_ai.output.messages'] as string)).toEqual([{ role: 'assistant', content: 'captured answer', refusal: null }]);

    const res = await s.t.app.inject({ method: 'POST', url: `/v1/${user.username}/minimal/chat/completions`, headers: user.headers, payload: { model: MODEL, messages: [{ role: 'user', content: 'ladder question' }] } });
    const [run] = spansNamed(s.exporter, `ladder.run ${user.username}/minimal`);
    expect(run!.attributes['ladder.input']).toBe('ladder question');
    expect(run!.attributes['ladder.answer']).toBe(res.json().choices[0].message.content);
    const exported = JSON.stringify(s.exporter.getFinishedSpans().map((span) => [span.attributes, span.status, span.links]));
    for (const secret of [user.key, s.primary.apiKey]) expect(exported).not.toContain(secret);
  });
});

describe('tracing off', () => {
  it('without an OTLP endpoint the app has no tracing hooks', async () => {
    const t = await build();
    try {
      expect(t.app.telemetry.enabled).toBe(false);
      expect(t.app.telemetry.runs).toBeUndefined();
      expect(t.app.telemetry.attemptTracer(createPriceTable())).toBeUndefined();
      expect(t.app.telemetry.traceParent()).toBeNull();
    } finally {
      await t.close();
    }
  });

  // The OpenTelemetry packages are CommonJS, so whatever loaded them is in require's cache. The
  // API package alone (no-op without an SDK) is loaded anyway, by prom-client and drizzle-orm.
  const loadedOtel = (settings: string) => {
    const dist = new URL('../../dist/src/', import.meta.url).href;
    const script = `import { createRequire } from 'node:module';
      await import('${dist}app.js');
      await (await import('${dist}telemetry/telemetry.js')).startTelemetry(${settings});
      const cache = Object.keys(createRequire(import.meta.url).cache);
      console.log(cache.filter((file) => file.includes('@opentelemetry/') && !file.includes('@opentelemetry/api/')).length);`;
    return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim());
  };

  it('off, the built app loads no OpenTelemetry SDK module; on, it does', () => {
    expect(loadedOtel('null')).toBe(0);
    expect(loadedOtel(`{ protocol: 'http/json', captureContent: false }`)).toBeGreaterThan(0);
  });
});
