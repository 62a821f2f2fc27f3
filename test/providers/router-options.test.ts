import { describe, expect, it } from 'vitest';
import { createProviderRouter } from '../../src/providers/router.js';
import { startFakeAnthropic, startFakeGemini, startFakeOpenAI } from '../fakes/vendors.js';
import { connection, rejection, routerWith, userSays } from './helpers.js';

describe('router options', () => {
  it('refuses a base URL override for an unknown provider, naming the setting', () => {
    expect(() => createProviderRouter({ baseUrls: { 'open-ai': 'http://127.0.0.1:1' } })).toThrow(/^PROVIDER_BASE_URL_OPEN_AI: /);
  });

  it('refuses a base URL override that is not an http(s) URL, naming the setting', () => {
    expect(() => createProviderRouter({ baseUrls: { 'azure-openai': 'ftp://x' } })).toThrow(/^PROVIDER_BASE_URL_AZURE_OPENAI: /);
  });

  it('treats a success body larger than maxResponseBytes as a failed attempt (vendor_response_too_large)', async () => {
    const fake = await startFakeOpenAI();
    const env = routerWith({ baseUrls: { openai: fake.baseUrl }, maxResponseBytes: 64 });
    try {
      const error = await rejection(env.router.call(userSays('a fairly long prompt that makes the echo exceed the limit'), [connection('openai', fake.apiKey)]));
      expect(error.attempts[0]).toMatchObject({ status: 200, outcome: 'failed', reason: 'vendor_response_too_large' });
      expect(error.message).toBe('All providers failed: openai (HTTP 200, vendor_response_too_large).');
    } finally {
      await env.router.close();
      await fake.close();
    }
  });
});

describe('fake vendors validate like the real APIs', () => {
  const post = (url: string, headers: Record<string, string>, body: unknown) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  it('OpenAI: 401 in its own error format for a wrong key, 400 without messages', async () => {
    const fake = await startFakeOpenAI();
    try {
      expect(await post(`${fake.baseUrl}/chat/completions`, { authorization: 'Bearer nope' }, { model: 'm', messages: [] })).toMatchObject({
        status: 401,
        body: { error: { code: 'invalid_api_key', type: 'invalid_request_error' } },
      });
      expect((await post(`${fake.baseUrl}/chat/completions`, { authorization: `Bearer ${fake.apiKey}` }, { model: 'm', messages: [] })).status).toBe(400);
    } finally {
      await fake.close();
    }
  });

  it('Anthropic: 400 without max_tokens, 401 with a wrong x-api-key', async () => {
    const fake = await startFakeAnthropic();
    try {
      const headers = { 'x-api-key': fake.apiKey, 'anthropic-version': '2023-06-01' };
      expect(await post(`${fake.url}/v1/messages`, headers, { model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] })).toEqual({
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } },
      });
      expect((await post(`${fake.url}/v1/messages`, { ...headers, 'x-api-key': 'bad' }, {})).body.error.type).toBe('authentication_error');
    } finally {
      await fake.close();
    }
  });

  it('Gemini: 403 without a key, 400 API_KEY_INVALID with a wrong one', async () => {
    const fake = await startFakeGemini();
    try {
      const url = `${fake.url}/v1beta/models/gemini-pro:generateContent`;
      expect((await post(url, {}, {})).body.error.status).toBe('PERMISSION_DENIED');
      const wrong = await post(url, { 'x-goog-api-key': 'bad' }, {});
      expect(wrong.status).toBe(400);
      expect(wrong.body.error.details[0].reason).toBe('API_KEY_INVALID');
    } finally {
      await fake.close();
    }
  });
});
