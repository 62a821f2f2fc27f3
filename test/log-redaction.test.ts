import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../src/log-redaction.js';

describe('redactSecrets (formatters.log)', () => {
  it('returns the very object it was given when it holds no secret: nothing is copied', () => {
    const line = { method: 'POST', path: '/v1/chat/completions', status: 200, nested: { provider: 'openai', list: [{ a: 1 }] } };
    expect(redactSecrets(line)).toBe(line);
  });

  it('censors every credential member on the first three levels, leaving the logged object untouched', () => {
    const line = {
      authorization: 'Bearer ldr_live_top',
      connection: { provider: 'openai', api_key: 'sk-one-level', apiKey: 'sk-camel' },
      req: { headers: { authorization: 'Bearer two-levels', 'x-api-key': 'ldr_live_anthropic_sdk', accept: 'json' } },
      list: [{ key: 'in-an-array' }],
      kept: 'visible',
    };
    const snapshot = structuredClone(line);
    expect(redactSecrets(line)).toEqual({
      authorization: '[redacted]',
      connection: { provider: 'openai', api_key: '[redacted]', apiKey: '[redacted]' },
      req: { headers: { authorization: '[redacted]', 'x-api-key': '[redacted]', accept: 'json' } },
      list: [{ key: '[redacted]' }],
      kept: 'visible',
    });
    expect(line).toEqual(snapshot);
  });

  it('copies only the objects on the way to a secret', () => {
    const untouched = { provider: 'openai' };
    const line = { a: untouched, b: { key: 'secret' } };
    const out = redactSecrets(line) as { a: unknown };
    expect(out).not.toBe(line);
    expect(out.a).toBe(untouched);
  });

  it('keeps empty members as they are, and does not walk past the third level', () => {
    expect(redactSecrets({ key: null, api_key: undefined })).toEqual({ key: null, api_key: undefined });
    const deep = { a: { b: { c: { key: 'fourth level' } } } };
    expect(redactSecrets(deep)).toBe(deep);
  });

  it('turns an error holding a credential into the plain object its serializer would write', () => {
    const err = Object.assign(new Error('boom'), { code: 'E_X', api_key: 'sk-in-error' });
    const out = redactSecrets({ err }) as { err: Record<string, unknown> };
    expect(out.err).toMatchObject({ type: 'Error', message: 'boom', code: 'E_X', api_key: '[redacted]' });
    expect(String(out.err.stack)).toContain('boom');
    expect(err.api_key).toBe('sk-in-error');
  });

  it('does not walk into class instances (requests, sockets, buffers)', () => {
    class Holder {
      key = 'not plain data';
    }
    const line = { holder: new Holder(), buffer: Buffer.from('key') };
    expect(redactSecrets(line)).toBe(line);
  });
});
