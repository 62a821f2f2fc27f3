// Issue 8, items 5 and 6: what a vendor says (answers and error messages) is the vendor's text,
// never the caller's fault: a NUL in it cannot fail a write, and the stored key never leaks
// through it, whole, upper-cased or in fragments, into responses, logs or the database.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LadderConfig } from '../../src/ladders/language/config.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, LogCapture, type TestApp } from '../helpers/build.js';

const KEY = 'sk-live-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH';
const oneStep: LadderConfig = {
  name: 'One step',
  exit: 'only',
  steps: [{ id: 'only', name: 'Only', type: 'normal', fields: [{ name: 'Q', type: 'text', from: 'input.context' }], systemPrompt: 'Answer.' }],
};

describe('vendor text', () => {
  let fake: FakeVendor;
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  const logs = new LogCapture();

  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: KEY });
    t = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl }, { logs });
    user = await createUser(t.app);
    expect((await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: KEY } })).statusCode).toBe(201);
    expect((await t.app.inject({ method: 'PUT', url: `/v1/${user.username}/one`, headers: user.headers, payload: { config: oneStep } })).statusCode).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const direct = () =>
    t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
  const ladder = () =>
    t.app.inject({ method: 'POST', url: `/v1/${user.username}/one/chat/completions`, headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
  const instance = async (id: string) =>
    (await t.database.query<{ status: string; answer: string | null; error: unknown; trace: any[] }>('select status, answer, error, trace from instances where id = $1', [id]))[0]!;
  const rejected = (message: string) => ({ error: { message, type: 'invalid_request_error', code: 'provider_rejected_request', param: null } });

  describe('with a NUL character (item 5)', () => {
    it('in an answer: the direct call answers 200 with U+FFFD in its place', async () => {
      fake.script({ kind: 'reply', content: 'before\u0000after' });
      const res = await direct();
      expect(res.statusCode).toBe(200);
      expect(res.json().choices[0].message.content).toBe('before\ufffdafter');
    });

    it('in an answer: the ladder run answers 200 and its row is stored as completed', async () => {
      fake.script({ kind: 'reply', content: 'before\u0000after' });
      const res = await ladder();
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().choices[0].message.content).toBe('before\ufffdafter');
      const row = await instance(res.headers['x-ladder-instance'] as string);
      expect(row).toMatchObject({ status: 'completed', answer: 'before\ufffdafter', error: null });
      expect(row.trace[0].nodes[0].output).toBe('before\ufffdafter');
    });

    it('in an error message: the direct call gets the vendor\'s 422, not invalid_characters', async () => {
      fake.script({ kind: 'error', status: 422, message: 'bad\u0000input' });
      const res = await direct();
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual(rejected('openai: bad\ufffdinput (HTTP 422)'));
    });

    it('in an error message: the ladder run gets the vendor\'s 422 and its row is stored as failed', async () => {
      fake.script({ kind: 'error', status: 422, message: 'bad\u0000input' });
      const res = await ladder();
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual(rejected('openai: bad\ufffdinput (HTTP 422)'));
      const row = await instance(res.headers['x-ladder-instance'] as string);
      expect(row).toMatchObject({
        status: 'failed',
        answer: null,
        error: { status: 422, type: 'invalid_request_error', code: 'provider_rejected_request', message: 'openai: bad\ufffdinput (HTTP 422)' },
      });
      expect(row.trace[0].nodes[0].error).toBe('openai: bad\ufffdinput (HTTP 422)');
    });
  });

  describe('quoting the key (item 6)', () => {
    // The key starts at character 471, so a cut at 500 would keep its first 29 characters.
    const padding = 'x'.repeat(471);
    const vendorMessage = `${padding}${KEY} then ${KEY.toUpperCase()} and ${KEY.slice(20, 31)} and ${KEY.slice(40, 48)}.`;
    const shown = `openai: ${`${padding}[redacted] then [redacted] and [redacted] and [redacted].`.slice(0, 500)}… (HTTP 422)`;

    /** No run of 8 characters of the key, in any case, anywhere in the text. */
    function expectNoKey(where: string, text: string) {
      const folded = text.toLowerCase();
      for (let i = 0; i + 8 <= KEY.length; i++) {
        expect(folded.includes(KEY.slice(i, i + 8).toLowerCase()), `${where} holds "${KEY.slice(i, i + 8)}"`).toBe(false);
      }
    }

    it('is redacted before the message is cut: response and logs of a direct call', async () => {
      fake.script({ kind: 'error', status: 422, message: vendorMessage });
      const res = await direct();
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual(rejected(shown));
      expectNoKey('response', res.body);
      expect(logs.text).toContain(`${padding}[redacted] then [redacted] an…`);
      expectNoKey('logs', logs.text);
    });

    it('is redacted before the message is cut: response, logs and row of a ladder run', async () => {
      fake.script({ kind: 'error', status: 422, message: vendorMessage });
      const res = await ladder();
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual(rejected(shown));
      expectNoKey('response', res.body);
      expectNoKey('logs', logs.text);
      const row = await instance(res.headers['x-ladder-instance'] as string);
      expect(row.error).toEqual({ status: 422, type: 'invalid_request_error', code: 'provider_rejected_request', message: shown });
      const stored = await t.database.query('select * from instances');
      expect(stored.length).toBeGreaterThan(0);
      expectNoKey('instances table', JSON.stringify(stored));
    });

    it('a message still longer than 500 characters after redaction is cut after it', async () => {
      fake.script({ kind: 'error', status: 422, message: `${KEY}${'y'.repeat(600)}` });
      const res = await direct();
      expect(res.json().error.message).toBe(`openai: [redacted]${'y'.repeat(490)}… (HTTP 422)`);
    });
  });
});
