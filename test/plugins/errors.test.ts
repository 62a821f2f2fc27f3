import Fastify, { type InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import app from '../../src/app.js';
import { toApiError } from '../../src/plugins/errors.js';
import { fastifyOptions } from '../../src/server-options.js';
import { openTestDatabase } from '../helpers/database.js';
import { adminHeaders, build, LogCapture, testConfig, type TestApp } from '../helpers/build.js';

const envelope = (status: number, code: string, message: string, param: string | null = null, type = 'invalid_request_error') => ({
  status,
  body: { error: { message, type, code, param } },
});

describe('error envelope', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build({ BODY_LIMIT_BYTES: '2048' });
  });
  afterAll(() => t.close());

  const cases: Array<[string, InjectOptions, ReturnType<typeof envelope>]> = [
    ['unknown route', { method: 'GET', url: '/v1/nothing/here/at/all' }, envelope(404, 'unknown_route', 'Unknown request URL: GET /v1/nothing/here/at/all.')],
    ['wrong method', { method: 'POST', url: '/v1/providers/catalog' }, envelope(405, 'method_not_allowed', 'POST is not allowed on /v1/providers/catalog; use GET.')],
    // A fixed word of ours in the {author} place is not a ladder path: no ladder methods are offered.
    ['a fixed path that does not exist', { method: 'POST', url: '/v1/pipelines/nothing' }, envelope(404, 'unknown_route', 'Unknown request URL: POST /v1/pipelines/nothing.')],
    ['a ladder path with a wrong method', { method: 'POST', url: '/v1/alice/summarise' }, envelope(405, 'method_not_allowed', 'POST is not allowed on /v1/alice/summarise; use PUT or GET or DELETE.')],
    [
      'malformed JSON',
      { method: 'POST', url: '/v1/admin/accounts', headers: { ...adminHeaders, 'content-type': 'application/json' }, payload: '{"username": ' },
      envelope(400, 'invalid_json', 'The request body is not valid JSON, or has a forbidden "__proto__" or "constructor.prototype" key.'),
    ],
    [
      'prototype poisoning',
      { method: 'POST', url: '/v1/admin/accounts', headers: { ...adminHeaders, 'content-type': 'application/json' }, payload: '{"username": "x", "__proto__": {"admin": true}}' },
      envelope(400, 'invalid_json', 'The request body is not valid JSON, or has a forbidden "__proto__" or "constructor.prototype" key.'),
    ],
    [
      'wrong content type',
      { method: 'POST', url: '/v1/admin/accounts', headers: { ...adminHeaders, 'content-type': 'text/plain' }, payload: 'username=x' },
      envelope(415, 'unsupported_media_type', 'Request bodies must be JSON: send `Content-Type: application/json`.'),
    ],
    [
      'body over the limit',
      { method: 'POST', url: '/v1/admin/accounts', headers: adminHeaders, payload: { username: 'x'.repeat(4096) } },
      envelope(413, 'request_too_large', 'The request body is larger than this server accepts.'),
    ],
    ['a badly encoded URL', { method: 'GET', url: '/v1/%ZZ/x' }, envelope(400, 'invalid_url', 'The URL is not validly percent-encoded.')],
    [
      'an over-long path segment',
      { method: 'GET', url: `/v1/${'a'.repeat(300)}/x` },
      envelope(414, 'uri_too_long', 'A segment of the URL path is longer than this server accepts.'),
    ],
    [
      'missing required field',
      { method: 'POST', url: '/v1/admin/accounts', headers: adminHeaders, payload: {} },
      envelope(400, 'missing_required_field', 'Missing required field: username.', 'username'),
    ],
    [
      'wrong type',
      { method: 'POST', url: '/v1/admin/accounts', headers: adminHeaders, payload: { username: 42 } },
      envelope(400, 'invalid_type', 'username must be a string.', 'username'),
    ],
    [
      'body that is not an object',
      { method: 'POST', url: '/v1/admin/accounts', headers: { ...adminHeaders, 'content-type': 'application/json' }, payload: '[1,2]' },
      envelope(400, 'invalid_type', 'The request body must be a JSON object.'),
    ],
    [
      'nested field',
      { method: 'POST', url: '/v1/admin/accounts/someone/api-keys', headers: adminHeaders, payload: { access: { ladders: [] } } },
      envelope(400, 'missing_required_field', 'Missing required field: access.mode.', 'access.mode'),
    ],
  ];

  it.each(cases)('%s', async (_name, request, expected) => {
    const res = await t.app.inject(request);
    expect(res.statusCode).toBe(expected.status);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual(expected.body);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('names the allowed methods in an Allow header on 405', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: '/readyz' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET');
  });

  it('keeps a sane caller-supplied x-request-id and replaces an unsafe one', async () => {
    const kept = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123.abc' } });
    expect(kept.headers['x-request-id']).toBe('trace-123.abc');
    const replaced = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('internal failures', () => {
  it('answer 500 api_error without internals, and log the cause with the request id', async () => {
    const logs = new LogCapture();
    const config = testConfig({ LOG_LEVEL: 'info' });
    const database = await openTestDatabase();
    const fastify = Fastify(fastifyOptions(config, logs));
    await fastify.register(app, { config, database });
    fastify.get('/boom', async () => {
      throw new Error('connection string postgres://secret@db leaked');
    });
    try {
      const res = await fastify.inject({ method: 'GET', url: '/boom' });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({
        error: { message: 'The server had an error while processing your request.', type: 'api_error', code: 'internal_error', param: null },
      });
      const id = res.headers['x-request-id'];
      const logged = logs.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request failed');
      expect(logged).toMatchObject({ request_id: id, err: { message: 'connection string postgres://secret@db leaked' } });
    } finally {
      await fastify.close();
      await database.close();
    }
  });
});

describe('toApiError: when the database is not there', () => {
  const reset = () => Object.assign(new Error('aborted'), { code: 'ECONNRESET' });

  it('is a retryable 503 for what would otherwise be a 500', () => {
    const error = toApiError(new Error('Failed query: select 1', { cause: reset() }));
    expect([error.statusCode, error.code, error.headers]).toEqual([503, 'database_unavailable', { 'retry-after': '1' }]);
  });

  it('leaves a client error alone: a caller resetting mid-body also carries ECONNRESET', () => {
    const error = toApiError(Object.assign(reset(), { statusCode: 400 }));
    expect([error.statusCode, error.code]).toEqual([400, 'invalid_request']);
  });
});
