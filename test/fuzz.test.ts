// Generated requests across every route: odd methods, paths, encodings, bodies, headers and
// content types. Whatever arrives, the answer is never a 5xx, always in the envelope (or the
// route's success shape), and comes in bounded time; the app still answers afterwards.
// A failure prints its seed: FUZZ_SEED=<seed> npx vitest run test/fuzz.test.ts reproduces it.
import net, { type AddressInfo } from 'node:net';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wellFormedText } from '../src/unicode.js';
import { startFakeOpenAI } from './fakes/vendors.js';
import { adminHeaders, build, createUser, type TestApp } from './helpers/build.js';
import { appendEvents, finishInstance, insertInstance } from './helpers/instance-events.js';
import { openStalled, type StalledClient } from './helpers/sse.js';
import { minimalLadder } from './ladders/examples.js';
import { checkModelName } from '../src/schemas/model-name.js';
import { finishedResponse } from '../src/responses/from-chat.js';

/** A stored response of alice's (inserted in beforeAll), so the stored-response routes find something. */
const RESPONSE_UUID = '5a0e1c2b-3d4f-4a6b-8c9d-0e1f2a3b4c5d';
const RESPONSE_ID = `resp_${RESPONSE_UUID.replace(/-/g, '')}`;
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 2500);
const PER_REQUEST_MS = 10_000;

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T,>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
type Random = ReturnType<typeof generator>;

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
const ODD_SEGMENTS = [
  '', '.', '..', '%2e%2e', '%00', 'a%00b', '%2F', 'a%2Fb', '%ZZ', '%', '%e9', '%C3%A9', 'é', '%F0%9F%98%80', '%ED%A0%80',
  ' ', '%20', '+', 'Bad-Slug', 'UPPER', '-x', 'x-', '_', '__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString',
  'admin', 'providers', 'chat', 'validate', 'v1', 'docs', 'null', 'undefined', '0', '-1', '1e309', 'true', '[]', '{}',
  'urn:uuid:00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '00000000000040008000000000000000', 'catalog', 'openai', 'anthropic', 'azure-openai', 'x'.repeat(64), 'x'.repeat(65), 'a'.repeat(101),
  ';', ':', '@', '*', '?', '%3F', '#', '%23', '\\', "'", '"', '<script>', '%0d%0a', 'ladder.json',
];
const FIELD_NAMES = [
  'model', 'messages', 'role', 'content', 'stream', 'temperature', 'max_tokens', 'knobs', 'config', 'description', 'usage_visibility',
  'config_visibility', 'provider', 'api_key', 'priority', 'label', 'endpoint', 'username', 'name', 'access', 'mode', 'ladders', 'author',
  'template', 'steps', 'exit', 'id', 'type', 'fields', 'from', 'stepId', 'nodes', 'continueIf', 'recursion', 'maxDepth', 'executionBudget',
  'maxSpend', 'allowedTargets', 'strategy', 'providers', 'models', '__proto__', 'constructor', 'toString', '', '\u0000', 'a\u0000b', '\ud800',
];
const STRINGS = [
  '', ' ', 'x', 'user', 'assistant', 'system', 'tool', 'gpt-4o-mini', 'openai/gpt-4o-mini', 'anthropic', 'openai', 'public', 'private',
  'unlisted', 'whitelist', 'blacklist', 'unrestricted', 'universal', 'constrained', 'normal', 'group', 'sequential', 'text', 'ingest',
  'input.context', '{{knobs.x}}', '\u0000', 'a\u0000b', '\ud800', '\udc00x', '😀', 'é', 'gpt-4o-模型', 'gpt-4o-\u2028', 'a\r\nb', 'http://127.0.0.1:1/v1', 'https://example.invalid',
  'file:///etc/passwd', 'javascript:alert(1)', '../../etc', '%00', '<b>', 'null', 'true', '1e309', 'ldr_live_abcdefgh_x', 'NaN',
];

function jsonValue(r: Random, depth = 0): unknown {
  const kind = depth > 4 ? r.int(6) : r.int(9);
  switch (kind) {
    case 0: return null;
    case 1: return r.chance(0.5);
    case 2: return r.pick([0, -1, 1, 0.5, -0.0, 1000, 1001, 2 ** 31, 2 ** 53 + 1, -1e308, 1e308, 5e-324, 50, 51]);
    case 3: return r.pick(STRINGS);
    case 4: return r.chance(0.1) ? 'y'.repeat(r.pick([1000, 70_000, 300_000])) : r.pick(STRINGS) + r.pick(STRINGS);
    case 5: return r.chance(0.3) ? '\u0000'.repeat(r.int(50) + 1) : r.pick(FIELD_NAMES);
    case 6:
    case 7: {
      const object: Record<string, unknown> = {};
      for (let i = r.int(5); i > 0; i--) object[r.pick(FIELD_NAMES)] = jsonValue(r, depth + 1);
      return object;
    }
    default: return Array.from({ length: r.int(4) }, () => jsonValue(r, depth + 1));
  }
}

/** A body that is close to what the route expects, with one or two things wrong. */
function plausibleBody(r: Random): unknown {
  const templates: Array<() => Record<string, unknown>> = [
    () => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    // Streamed chat: before the first chunk every failure is plain JSON; a stream that started ends properly.
    () => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, ...(r.chance(0.5) ? { stream_options: { include_usage: r.chance(0.5) } } : {}) }),
    () => ({ model: r.pick(['claude-sonnet-4-5', 'gemini-2.5-flash', 'anthropic/x', 'x']), messages: [{ role: 'user', content: 'hi' }], stream: r.pick([true, false, null, 'true', 1]) }),
    () => ({ config: structuredClone(minimalLadder) }),
    () => ({ provider: 'openai', api_key: 'sk-test', priority: 5, label: 'x' }),
    () => ({ username: `fz${r.int(1e6)}` }),
    () => ({ name: 'k', access: { mode: 'whitelist', ladders: ['alice/*'] } }),
    () => ({ author: 'alice', template: 'x', model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    () => ({ author: 'alice', template: 'known', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    // The Responses API: items of every kind, tools (built-in ones too), formats, a stored previous response.
    () => ({
      model: r.pick(['gpt-4o-mini', 'claude-sonnet-4-5', 'x']),
      input: r.pick<unknown>([
        'hi',
        [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_image', image_url: 'https://example.com/a.png' }] }],
        [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'ok' }],
        [{ type: 'reasoning', summary: [] }, { type: 'item_reference', id: 'msg_1' }],
      ]),
      ...(r.chance(0.3) ? { tools: [{ type: r.pick(['function', 'web_search', 'file_search']), name: 'f', parameters: { type: 'object' } }] } : {}),
      ...(r.chance(0.3) ? { text: { format: r.pick<unknown>([{ type: 'json_object' }, { type: 'json_schema', name: 'x' }, { type: 'text' }]) } } : {}),
      ...(r.chance(0.3) ? { previous_response_id: r.pick([RESPONSE_ID, 'resp_x', '']) } : {}),
      ...(r.chance(0.3) ? { stream: r.pick([true, false, null]) } : {}),
    }),
  ];
  const body = r.pick(templates)();
  for (let i = r.int(3); i > 0; i--) {
    const keys = Object.keys(body);
    const key = r.chance(0.7) && keys.length > 0 ? r.pick(keys) : r.pick(FIELD_NAMES);
    if (r.chance(0.2)) delete body[key];
    else body[key] = jsonValue(r);
  }
  if (r.chance(0.1) && body.config && typeof body.config === 'object') {
    const config = body.config as Record<string, unknown>;
    config[r.pick(['steps', 'knobs', 'exit', 'name', 'allowedTargets', 'executionBudget'])] = jsonValue(r);
  }
  return body;
}

// Query parameters of the listing routes, and values for any of them.
const USAGE_QUERY = ['start', 'end', 'group_by'];
const INSTANCES_QUERY = ['status', 'author', 'template', 'limit', 'after'];
const ODD_QUERY_NAMES = ['version', '__proto__', 'x', '', 'limit[]', 'LIMIT'];
const QUERY_VALUES = [
  '', '0', '-1', '1', '20', '100', '101', '1e2', ' 5', '0x10', '99999999999999999999', 'NaN', 'day', 'model', 'provider', 'api_key', 'ladder',
  'pending', 'running', 'completed', 'failed', 'cancelled', 'PENDING', 'alice', 'known', '2026-01-01', '2026-02-30', '0000-01-01', '9999-12-31',
  '2026-01-01T00:00:00Z', '2026-01-01T00:00:00+99:99', '2026-01-01T24:00:00Z', '1970-01-01T00:00:00.123456789Z', '+275760-09-13T00:00:00Z',
  '%00', 'a%00b', '%ZZ', '%E9', '%C3%A9', '%F0%9F%98%80', '%ED%A0%80', 'AAAA', '=', 'q'.repeat(5000),
  // Cursors of the right shape: impossible times, the first and last years, a bad id, a NUL.
  ...['2026-02-30T00:00:00.000000', '2026-13-01T00:00:00.000000', '2026-01-01T23:59:60.000000', '2026-01-01T24:00:00.000000',
    '0000-01-01T00:00:00.000000', '0001-01-01T00:00:00.000000', '9999-12-31T23:59:59.999999',
  ].map((time) => Buffer.from(`${time}_00000000-0000-4000-8000-000000000000`).toString('base64url')),
  Buffer.from('2026-01-01T00:00:00.000000_zzzzzzzz-0000-4000-8000-000000000000').toString('base64url'),
  Buffer.from('2026-01-01T00:00:00.000000_\u0000').toString('base64url'),
];

/** Mostly the route's own parameters (sometimes one twice), now and then another. */
function query(r: Random, names: string[]): string {
  const pairs = Array.from({ length: r.int(4) + 1 }, () => `${r.chance(0.9) ? r.pick(names) : r.pick(ODD_QUERY_NAMES)}=${r.pick(QUERY_VALUES)}`);
  return `?${pairs.join('&')}`;
}

/** A usage range short enough to pass the range check, at the edges of the calendar and of time zones. */
function usageRange(r: Random): string {
  const day = `${r.pick(['0000', '0001', '1969', '1970', '2026', '9999'])}-${r.pick(['01-01', '12-31', '02-29'])}`;
  const start = day + r.pick(['', 'T00:00:00Z', 'T23:59:59.999Z', 'T00:00:00+14:00', 'T23:59:59-14:00']);
  const end = day + r.pick(['', 'T00:00:00Z', 'T23:59:59.999999999Z', 'T00:00:00-14:00', 'T23:59:59+14:00']);
  return `?start=${encodeURIComponent(start)}&end=${encodeURIComponent(end)}${r.chance(0.3) ? `&group_by=${r.pick(QUERY_VALUES)}` : ''}`;
}

function nested(r: Random): string {
  const depth = r.pick([50, 1000, 10_000, 100_000]);
  return r.chance(0.5) ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

function payload(r: Random): string | undefined {
  switch (r.int(10)) {
    case 0: return undefined;
    case 1: return r.pick(['', ' ', 'null', '[]', '"x"', '1', 'true', '{', '{"a":}', '\u0000', '{"a":1}{"b":2}', 'NaN', '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{}}}', '\ufeff{}', '{"model":"\\ud800"}', '{"model":"\\u0000"}']);
    case 2: return nested(r);
    case 3: return JSON.stringify(jsonValue(r));
    case 4: return 'z'.repeat(r.pick([10, 2_000_000]));
    default: return JSON.stringify(plausibleBody(r));
  }
}

describe('fuzz', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  // Finished instances (a stream of one ends after its terminal event), of both accounts.
  const instanceIds: string[] = [];
  const finishedInstance = async (accountId: string, status: 'completed' | 'cancelled') => {
    const id = await insertInstance(t.database, { accountId, slug: 'known' });
    await appendEvents(t.database, id, [{ type: 'instance.started' }, { type: `instance.${status}` }]);
    await finishInstance(t.database, id, status === 'completed'
      ? { status, answer: 'done' }
      : { status, error: { status: 499, type: 'invalid_request_error', code: 'run_cancelled', message: 'Cancelled.' } });
    return id;
  };
  // Clients that never read a stream of alice's run with a long answer: they hold her share of the
  // streams (SSE_MAX_STREAMS 8: 2 an account) all along, so her streams are 429 and bob's still 200.
  const stalled: StalledClient[] = [];
  beforeAll(async () => {
    t = await build({ SSE_MAX_STREAMS: '8', SSE_IDLE_TIMEOUT_MS: '600000' });
    user = await createUser(t.app, 'alice');
    // A second account owns the provider connections, so that no chat request ever reaches a vendor.
    const res = await t.app.inject({ method: 'PUT', url: '/v1/alice/known', headers: user.headers, payload: { config: minimalLadder, usage_visibility: 'public' } });
    expect(res.statusCode).toBe(201);
    instanceIds.push(await finishedInstance(user.id, 'completed'));
    await t.database.query(
      `insert into responses (id, account_id, input_items, body) values ($1, $2, $3, $4)`,
      [RESPONSE_UUID, user.id, JSON.stringify([{ id: 'msg_1', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'hi' }] }]), JSON.stringify(finishedResponse({ id: RESPONSE_ID, createdAt: 0, body: { model: 'gpt-4o-mini', input: 'hi' } }, [], 'stop', { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, 0))],
    );
    const long = await insertInstance(t.database, { accountId: user.id, slug: 'known' });
    await finishInstance(t.database, long, { status: 'completed', answer: 'z'.repeat(12 * 1024 * 1024) });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    for (let i = 0; i < 2; i++) {
      const client = await openStalled(() => net.connect(port, '127.0.0.1'), '127.0.0.1', `/v1/pipelines/instances/${long}/events`, user.headers);
      expect(client.head).toMatch(/^HTTP\/1\.1 200 /);
      stalled.push(client);
    }
  });
  afterAll(async () => {
    stalled.forEach((c) => c.close());
    await t?.close();
  });

  function request(r: Random, other: { headers: Record<string, string> }): InjectOptions {
    const segment = () => (r.chance(0.5) ? r.pick(ODD_SEGMENTS) : r.pick(['alice', 'known', 'bob', 'x', 'a1', 'openai', `fz${r.int(100)}`]));
    const instanceId = () => (r.chance(0.5) ? r.pick(instanceIds) : r.chance(0.1) ? r.pick(instanceIds).toUpperCase() : segment());
    // The routes' own methods most of the time, so that requests get past routing.
    const method = (own: (typeof METHODS)[number]) => (r.chance(0.7) ? own : r.pick(METHODS));
    const paths: Array<() => string | { url: string; method: (typeof METHODS)[number] }> = [
      () => '/v1/chat/completions',
      () => `/v1/${segment()}/${segment()}/chat/completions`,
      () => `/v1/${segment()}/${segment()}`,
      () => `/v1/${segment()}`,
      () => '/v1/providers',
      () => `/v1/providers/${segment()}`,
      () => '/v1/providers/catalog',
      () => '/v1/validate',
      () => '/v1/admin/accounts',
      () => `/v1/admin/accounts/${segment()}/api-keys`,
      () => `/v1/admin/api-keys/${segment()}`,
      () => r.pick(['/healthz', '/readyz', '/v1/openapi.json', '/docs', '/docs/static/nope.js', '/v1/pipelines/instances', '/', '//', '/v1//x', '/v1/']),
      () => `/${Array.from({ length: r.int(6) + 1 }, segment).join('/')}`,
      () => ({ url: '/v1/models', method: method('GET') }),
      () => ({ url: `/v1/models/${segment()}${r.chance(0.3) ? `/${segment()}` : ''}`, method: method('GET') }),
      () => ({ url: `/v1/usage${r.pick([query(r, USAGE_QUERY), usageRange(r), ''])}`, method: method('GET') }),
      () => ({ url: `/v1/pipelines/instances${r.chance(0.8) ? query(r, INSTANCES_QUERY) : ''}`, method: method('GET') }),
      () => ({ url: '/v1/pipelines/instances', method: method('POST') }),
      () => ({ url: '/v1/responses', method: method('POST') }),
      () => {
        const id = r.chance(0.6) ? RESPONSE_ID : r.pick([segment(), 'resp_00000000000000000000000000000000', RESPONSE_ID.toUpperCase()]);
        const [suffix, own] = r.pick([['', 'GET'], ['', 'DELETE'], ['/input_items', 'GET']] as const);
        const listQuery = suffix && r.chance(0.7) ? query(r, ['limit', 'order', 'after', 'include']) : '';
        return { url: `/v1/responses/${id}${suffix}${listQuery}`, method: method(own) };
      },
      () => {
        const [suffix, own] = r.pick([['', 'GET'], ['/trace', 'GET'], ['/events', 'GET'], ['/cancel', 'POST'], ['/rerun', 'POST']] as const);
        return { url: `/v1/pipelines/instances/${instanceId()}${suffix}`, method: method(own) };
      },
    ];
    const target = r.pick(paths)();
    let url = typeof target === 'string' ? target : target.url;
    if (r.chance(0.15)) url += r.pick(['?', '?version=1', '?version=0', '?version=abc', '?version=1&version=2', '?a=%ZZ', '?__proto__=1', `?x=${'q'.repeat(5000)}`]);
    if (r.chance(0.05)) url += r.pick(['/', '//', '/.', '/%00']);
    const owner = r.chance(0.6) ? user : other;
    const auth = r.pick<Record<string, string>>([
      owner.headers, owner.headers, owner.headers, adminHeaders, {}, { authorization: 'Bearer ' }, { authorization: 'Bearer ldr_live_abcdefgh_xyz' },
      { authorization: 'Basic YTpi' }, { authorization: `Bearer ${'k'.repeat(10_000)}` }, { authorization: 'Bearer a\tb' },
    ]);
    const body = payload(r);
    const headers: Record<string, string> = { ...auth };
    if (body !== undefined || r.chance(0.1)) {
      const contentType = r.pick([
        'application/json', 'application/json', 'application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1',
        'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/vnd.api+json', 'APPLICATION/JSON',
        'application/json;', '', 'application/octet-stream', 'application/json, text/plain',
      ]);
      if (contentType !== '' || r.chance(0.5)) headers['content-type'] = contentType;
    }
    if (r.chance(0.1)) headers['x-request-id'] = r.pick(['ok-1', 'x'.repeat(500), 'a b', '\u00e9']);
    if (r.chance(0.05)) headers['accept'] = r.pick(['text/html', '*/*', 'application/xml']);
    if (r.chance(0.05)) headers['content-encoding'] = r.pick(['gzip', 'br', 'identity']);
    if (r.chance(0.05)) headers['x-forwarded-for'] = '1.2.3.4';
    if (r.chance(0.1)) headers['last-event-id'] = r.pick(['', '0', '1', ' 1 ', '-1', '1.5', '1e3', '99999999999', 'abc', '\u00e9', '1'.repeat(500)]);
    if (r.chance(0.1)) headers['idempotency-key'] = r.pick(['', 'k1', 'k1', ' ', 'a\tb', '\u00e9', 'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(10_000)]);
    return {
      method: typeof target === 'string' ? r.pick(METHODS) : target.method,
      url,
      headers,
      ...(body !== undefined ? { payload: body } : {}),
      remoteAddress: `10.0.0.${r.int(200)}`,
    };
  }

  it(`answers ${REQUESTS} generated requests without a 5xx, always in the envelope (seed ${SEED})`, async () => {
    const other = await createUser(t.app, 'bob');
    // A connection to a closed local port: a call that got this far would fail fast, locally.
    await t.app.inject({ method: 'POST', url: '/v1/providers', headers: other.headers, payload: { provider: 'openai', api_key: 'sk-x', endpoint: 'http://127.0.0.1:9/v1' } });
    instanceIds.push(await finishedInstance(other.id, 'cancelled'));
    const r = generator(SEED);
    const failures: string[] = [];
    let unsendable = 0;
    const started = performance.now();
    for (let i = 0; i < REQUESTS && failures.length < 10; i++) {
      const options = request(r, other);
      const describeRequest = () => `#${i} ${options.method} ${String(options.url).slice(0, 200)} ${JSON.stringify(options.headers).slice(0, 200)} body=${JSON.stringify(String(options.payload ?? '<none>').slice(0, 200))}`;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), PER_REQUEST_MS)));
      // light-my-request itself refuses a few URLs (`//x` parses as a host); those never reach the app.
      const sent = t.app.inject(options).catch((error: unknown) => {
        if (error instanceof TypeError && error.message === 'Invalid URL') return 'unsendable' as const;
        throw error;
      });
      const res = await Promise.race([sent, timeout]).finally(() => clearTimeout(timer));
      if (res === 'unsendable') {
        unsendable++;
        continue;
      }
      if (res === 'timeout') {
        failures.push(`${describeRequest()}: no answer within ${PER_REQUEST_MS} ms`);
        continue;
      }
      const problem = judge(options, res.statusCode, String(res.headers['content-type'] ?? ''), res.body);
      if (problem) failures.push(`${describeRequest()}: ${problem}`);
    }
    const elapsed = Math.round(performance.now() - started);
    if (failures.length > 0) console.error(`fuzz failed with FUZZ_SEED=${SEED} after ${elapsed} ms:\n${failures.join('\n')}`);
    expect(failures, `FUZZ_SEED=${SEED}`).toEqual([]);
    expect(unsendable).toBeLessThan(REQUESTS / 20);
    // Alice's clients that never read still hold her share of the streams; bob's stream is served.
    const events = (headers: Record<string, string>, id: string) => t.app.inject({ method: 'GET', url: `/v1/pipelines/instances/${id}/events`, headers });
    const hers = await events(user.headers, instanceIds[0]!);
    expect(hers.statusCode).toBe(429);
    expect(hers.json().error.code).toBe('too_many_account_streams');
    const his = await events(other.headers, instanceIds[1]!);
    expect(his.statusCode).toBe(200);
    expect(judge({ method: 'GET', url: `/v1/pipelines/instances/${instanceIds[1]}/events` }, his.statusCode, String(his.headers['content-type']), his.body)).toBeNull();
    const health = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    // Whatever was recorded on the way, the usage ledger can still write it all.
    await t.app.usageLedger.flush();
    expect(t.app.usageLedger.buffered).toBe(0);
  }, 120_000);

  it('takes every hostile model name through chat to the ledger, which keeps writing', async () => {
    const other = await createUser(t.app, 'carol');
    await t.app.inject({ method: 'POST', url: '/v1/providers', headers: other.headers, payload: { provider: 'openai', api_key: 'sk-x', endpoint: 'http://127.0.0.1:9/v1' } });
    const models = [...STRINGS, 'x\u0000', '\u0000', 'a\u001fb', 'm\r\nx-injected: 1', '\u007f', 'x'.repeat(256)];
    for (const model of models) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: other.headers, payload: { model, messages: [{ role: 'user', content: 'hi' }] } });
      expect(judge({ method: 'POST', url: '/v1/chat/completions' }, res.statusCode, String(res.headers['content-type']), res.body), JSON.stringify(model)).toBeNull();
    }
    await t.app.usageLedger.flush();
    expect(t.app.usageLedger.buffered).toBe(0);
    const [row] = await t.database.query<{ n: number }>('select count(*)::int as n from usage_records where account_id = $1', [other.id]);
    // Every name the route takes was a call (failed at the closed port), and recorded.
    expect(row!.n).toBe(models.filter((model) => model !== '' && !refusedModel(model)).length);
  });
});

// Issue 16, item 4: a model name the vendor echoes ends up in the x-ladder-model header; no name,
// however odd, may turn a billed call into a 500. Generated names mix plain ASCII with control
// characters, line separators, CJK, emoji, Latin-1 and lone surrogates.
describe('fuzz: model names a vendor echoes', () => {
  const PIECES = ['gpt-4o-', 'x', '模型', '\u2028', '\u2029', '\r\n', '\n', '\t', ' ', '\u0085', '\u007f', '\u0001', '🦙', '😀', 'é', 'ÿ', '%', '%0A', '\ud800', '\udfff', '\ufeff', '\u200b', 'Ω'];
  it('answers 200 with a sendable, decodable x-ladder-model for every generated name without a control character, 400 for the others', async () => {
    const fake = await startFakeOpenAI();
    const t = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl });
    try {
      const user = await createUser(t.app);
      expect((await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } })).statusCode).toBe(201);
      const r = generator(SEED);
      const failures: string[] = [];
      for (let i = 0; i < 150 && failures.length < 5; i++) {
        let model = 'gpt-4o-';
        for (let n = r.int(6) + 1; n > 0; n--) model += r.pick(PIECES);
        if (r.chance(0.3)) model += String.fromCodePoint(0x80 + r.int(0x10ff7f - 0x80));
        const res = await t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: user.headers, payload: { model, messages: [{ role: 'user', content: 'hi' }] } });
        const header = res.headers['x-ladder-model'];
        // Control characters never reach a vendor (the ledger item of issue 16); the rest are echoed.
        if (refusedModel(model)) {
          if (res.statusCode !== 400 || res.json().error.code !== 'invalid_characters') failures.push(`${JSON.stringify(model)}: ${res.statusCode} ${res.body.slice(0, 300)}`);
        } else if (res.statusCode !== 200) failures.push(`${JSON.stringify(model)}: ${res.statusCode} ${res.body.slice(0, 300)}`);
        else if (typeof header !== 'string' || !/^[\x21-\x7e]*$/.test(header) || decodeURIComponent(header) !== wellFormedText(model)) {
          failures.push(`${JSON.stringify(model)}: x-ladder-model ${JSON.stringify(header)}`);
        }
      }
      expect(failures, `FUZZ_SEED=${SEED}`).toEqual([]);
    } finally {
      await t.close();
      await fake.close();
    }
  }, 60_000);
});

/** Whether the chat routes refuse this model name (400 invalid_characters). */
function refusedModel(model: string): boolean {
  try {
    checkModelName(model);
    return false;
  } catch {
    return true;
  }
}

/** What is wrong with an answer, or null. */
function judge(options: InjectOptions, status: number, contentType: string, body: string): string | null {
  if (status >= 500) return `status ${status}: ${body.slice(0, 300)}`;
  if (options.method === 'HEAD') return body === '' ? null : 'HEAD answered with a body';
  const path = String(options.url).split('?')[0]!;
  // The browsable reference serves HTML, scripts and styles.
  if (status < 300 && (path === '/docs' || path.startsWith('/docs/'))) return null;
  // A finished run's event stream: its events, then the terminal one, then the end.
  if (status === 200 && path.endsWith('/events')) {
    if (!contentType.startsWith('text/event-stream')) return `status 200 with content-type ${JSON.stringify(contentType)}`;
    return /\nevent: instance\.(completed|cancelled)\ndata: \{.*\}\n\n$/.test(body) ? null : `status 200: not a finished stream: ${body.slice(0, 300)}`;
  }
  // A chat stream: events, then [DONE] or one error event.
  if (status === 200 && contentType.startsWith('text/event-stream') && path.endsWith('/chat/completions')) {
    return /(data: \[DONE\]|data: \{"error":\{.*\}\})\n\n$/.test(body) ? null : `status 200: not a finished chat stream: ${body.slice(-300)}`;
  }
  // A Responses stream: events, then its last one.
  if (status === 200 && contentType.startsWith('text/event-stream') && path === '/v1/responses') {
    return /\nevent: response\.(completed|incomplete|failed)\ndata: \{.*\}\n\n$/.test(body) ? null : `status 200: not a finished Responses stream: ${body.slice(-300)}`;
  }
  if (!contentType.startsWith('application/json')) return `status ${status} with content-type ${JSON.stringify(contentType)}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `status ${status}: body is not JSON: ${body.slice(0, 200)}`;
  }
  if (status < 400) return parsed !== null && typeof parsed === 'object' ? null : `status ${status}: ${body.slice(0, 200)}`;
  const error = (parsed as { error?: Record<string, unknown> }).error;
  const keys = error && typeof error === 'object' ? Object.keys(error).sort().join(',') : '';
  const wellFormed =
    Object.keys(parsed as object).length === 1 &&
    keys === 'code,message,param,type' &&
    typeof error!.message === 'string' &&
    typeof error!.type === 'string' &&
    typeof error!.code === 'string' &&
    (error!.param === null || typeof error!.param === 'string');
  return wellFormed ? null : `status ${status}: not the envelope: ${body.slice(0, 300)}`;
}
