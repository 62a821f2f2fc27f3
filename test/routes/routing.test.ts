// Which route answers a request: a wrong method on a fixed path is 405 naming the allowed
// methods (never a ladder 404 or a 401), a missing static file is 404, a malformed ladder
// path never skips the body checks, and a malformed id is 400 before the database sees it.
import Fastify from 'fastify';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import app from '../../src/app.js';
import { fastifyOptions } from '../../src/server-options.js';
import { openTestDatabase } from '../helpers/database.js';
import { adminHeaders, build, createUser, LogCapture, testConfig, type TestApp } from '../helpers/build.js';

const body = (code: string, message: string, param: string | null = null) => ({ error: { message, type: 'invalid_request_error', code, param } });

describe('routing', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    t = await build();
    user = await createUser(t.app, 'alice');
  });
  afterAll(() => t.close());

  describe('a wrong method on a fixed path is 405 with an Allow header, before authentication', () => {
    const cases: Array<[string, string, Record<string, string>, string]> = [
      ['GET', '/v1/chat/completions', {}, 'POST'],
      ['GET', '/v1/chat/completions', { authorization: 'Bearer nope' }, 'POST'],
      ['PUT', '/v1/admin/accounts', adminHeaders, 'POST, GET'],
      ['DELETE', '/v1/admin/accounts', adminHeaders, 'POST, GET'],
      ['GET', '/v1/validate', {}, 'POST'],
      ['PUT', '/v1/validate', {}, 'POST'],
      ['GET', '/v1/providers/openai', {}, 'PATCH, DELETE'],
      ['PATCH', '/v1/providers/catalog', {}, 'GET'],
      ['POST', '/v1/admin/api-keys/00000000-0000-4000-8000-000000000000', adminHeaders, 'DELETE'],
    ];
    it.each(cases)('%s %s', async (method, url, headers, allow) => {
      const res = await t.app.inject({ method: method as 'GET', url, headers: { ...headers, ...user.headers, ...headers } });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.json()).toEqual(body('method_not_allowed', `${method} is not allowed on ${url}; use ${allow.split(', ').join(' or ')}.`));
    });

    it('without an API key, too (the path is ours, not a ladder)', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/chat/completions' });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('POST');
    });
  });

  it('answers a missing file under /docs/static with 404, not 405', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/static/nope.js' });
    expect(res.statusCode).toBe(404);
    expect(res.headers.allow).toBeUndefined();
    expect(res.json()).toEqual(body('unknown_route', 'Unknown request URL: GET /docs/static/nope.js.'));
  });

  it('still runs ladder routes for authors that are not reserved words', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/alice/nothing', headers: user.headers });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('ladder_not_found');
  });

  describe('a malformed author or slug with a missing, empty or invalid body', () => {
    const put = (url: string, extra: { payload?: string; headers?: Record<string, string> } = {}) =>
      t.app.inject({ method: 'PUT', url, headers: { ...user.headers, ...extra.headers }, ...(extra.payload !== undefined ? { payload: extra.payload } : {}) });
    const post = (url: string, extra: { payload?: string; headers?: Record<string, string> } = {}) =>
      t.app.inject({ method: 'POST', url, headers: { ...user.headers, ...extra.headers }, ...(extra.payload !== undefined ? { payload: extra.payload } : {}) });
    const json = { 'content-type': 'application/json' };

    for (const path of ['/v1/alice/Bad-Slug', '/v1/X/slug', `/v1/alice/${'x'.repeat(65)}`]) {
      it(`PUT ${path}`, async () => {
        const none = await put(path);
        expect(none.statusCode).toBe(400);
        expect(none.json()).toEqual(body('invalid_type', 'The request body must be a JSON object.'));
        const empty = await put(path, { payload: '{}', headers: json });
        expect(empty.statusCode).toBe(400);
        expect(empty.json()).toEqual(body('missing_required_field', 'Missing required field: config.', 'config'));
        const wrong = await put(path, { payload: '[1]', headers: json });
        expect(wrong.json()).toEqual(body('invalid_type', 'The request body must be a JSON object.'));
        const unknown = await put(path, { payload: '{"config":{},"extra":1}', headers: json });
        expect(unknown.json()).toEqual(body('unknown_parameter', 'Unrecognized request argument supplied: extra.', 'extra'));
        const emptyJson = await put(path, { payload: '', headers: json });
        expect(emptyJson.json()).toEqual(body('invalid_json', 'The request has `Content-Type: application/json` but an empty body.'));
      });

      it(`POST ${path}/chat/completions`, async () => {
        const url = `${path}/chat/completions`;
        const none = await post(url);
        expect(none.statusCode).toBe(400);
        expect(none.json()).toEqual(body('invalid_type', 'The request body must be a JSON object.'));
        const empty = await post(url, { payload: '{}', headers: json });
        expect(empty.statusCode).toBe(400);
        expect(empty.json()).toEqual(body('missing_required_field', 'Missing required field: model.', 'model'));
        const noMessages = await post(url, { payload: '{"model":"m"}', headers: json });
        expect(noMessages.json()).toEqual(body('missing_required_field', 'Missing required field: messages.', 'messages'));
        // A valid body reaches the lookup, which answers as for any ladder the caller cannot see.
        const valid = await post(url, { payload: '{"model":"m","messages":[{"role":"user","content":"hi"}]}', headers: json });
        expect(valid.statusCode).toBe(404);
        expect(valid.json().error.code).toBe('ladder_not_found');
      });
    }

    it('a bad query string with a malformed slug is 400 for the query', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/alice/Bad-Slug?version=0', headers: user.headers });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_value', param: 'version' });
    });
  });

  describe('ids', () => {
    it.each([
      'urn:uuid:00000000-0000-4000-8000-000000000000',
      '{00000000-0000-4000-8000-000000000000}',
      '00000000000040008000000000000000',
      '00000000-0000-4000-8000-00000000000g',
    ])('DELETE /v1/admin/api-keys/%s is 400 invalid_value, never reaching the database', async (id) => {
      const res = await t.app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${encodeURIComponent(id)}`, headers: adminHeaders });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value', param: 'id' });
    });

    it('accepts upper-case hexadecimal, which the database takes', async () => {
      const res = await t.app.inject({ method: 'DELETE', url: `/v1/admin/api-keys/${user.keyId.toUpperCase()}`, headers: adminHeaders });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: true });
    });
  });
});

describe('admin routes without ADMIN_TOKEN', () => {
  it('do not exist: a wrong method there is 404, not 405', async () => {
    const t = await build({ ADMIN_TOKEN: '' });
    try {
      for (const method of ['GET', 'POST'] as const) {
        const res = await t.app.inject({ method, url: '/v1/admin/accounts', headers: adminHeaders, payload: method === 'POST' ? {} : undefined });
        expect(res.statusCode, method).toBe(404);
        expect(res.json()).toEqual(body('unknown_route', `Unknown request URL: ${method} /v1/admin/accounts.`));
      }
    } finally {
      await t.close();
    }
  });
});

describe('a failed database query', () => {
  it('is logged without its SQL statement or parameters', async () => {
    const logs = new LogCapture();
    const config = testConfig({ LOG_LEVEL: 'info' });
    const database = await openTestDatabase();
    const fastify = Fastify(fastifyOptions(config, logs));
    await fastify.register(app, { config, database });
    fastify.get('/db-boom', async () => fastify.db.execute(sql`select secret_column from api_keys where key_hash = ${'hash-0123456789'}`));
    try {
      const res = await fastify.inject({ method: 'GET', url: '/db-boom' });
      expect(res.statusCode).toBe(500);
      const logged = logs.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request failed');
      expect(logged.err).toMatchObject({ code: '42703', message: 'column "secret_column" does not exist' });
      expect(logs.text).not.toMatch(/select|hash-0123456789|api_keys/i);
    } finally {
      await fastify.close();
      await database.close();
    }
  });
});
