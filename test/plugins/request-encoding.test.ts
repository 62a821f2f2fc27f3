// A request body with a Content-Encoding is refused with 415: we never decode request bodies,
// and a body labelled gzip was read as plain JSON.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, build, type TestApp } from '../helpers/build.js';

const refused = (encoding: string) => ({
  error: {
    message: `Content-Encoding ${JSON.stringify(encoding)} is not supported: send the request body uncompressed.`,
    type: 'invalid_request_error',
    code: 'unsupported_content_encoding',
    param: 'content-encoding',
  },
});

describe('Content-Encoding on request bodies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });
  afterAll(() => t.close());

  const post = (encoding: string | undefined, payload: string | Buffer) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/admin/accounts',
      headers: { ...adminHeaders, 'content-type': 'application/json', ...(encoding === undefined ? {} : { 'content-encoding': encoding }) },
      payload,
    });

  it('refuses plain JSON labelled gzip, and creates nothing', async () => {
    const res = await post('gzip', JSON.stringify({ username: 'gzipped' }));
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual(refused('gzip'));
    const listed = await t.app.inject({ method: 'GET', url: '/v1/admin/accounts/gzipped/api-keys', headers: adminHeaders });
    expect(listed.statusCode).toBe(404);
  });

  it('refuses a body that really is gzip, and br, deflate and a list of encodings', async () => {
    const res = await post('gzip', gzipSync(JSON.stringify({ username: 'realgzip' })));
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual(refused('gzip'));
    for (const encoding of ['br', 'deflate', 'GZIP', 'identity, gzip', 'x-unknown']) {
      const other = await post(encoding, JSON.stringify({ username: 'other' }));
      expect(other.statusCode, encoding).toBe(415);
      expect(other.json(), encoding).toEqual(refused(encoding));
    }
  });

  it('accepts identity, in any case, as no encoding', async () => {
    for (const [encoding, username] of [['identity', 'ident-a'], ['Identity', 'ident-b'], [undefined, 'ident-c']] as const) {
      const res = await post(encoding, JSON.stringify({ username }));
      expect(res.statusCode, String(encoding)).toBe(201);
      expect(res.json().username).toBe(username);
    }
  });

  it('ignores the header on a request without a body', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/providers/catalog', headers: { 'content-encoding': 'gzip' } });
    expect(res.statusCode).toBe(200);
  });

  it('still asks for authentication first, as for a wrong Content-Type', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/validate',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: '{}',
    });
    expect(res.statusCode).toBe(401);
  });
});
