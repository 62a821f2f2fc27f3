// GET /v1/providers shows each connection's health as the answering node sees it: the circuit
// breaker's state and the last failed attempt (reason, vendor status, time), never the vendor's
// message nor the key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, type TestApp } from '../helpers/build.js';

describe('connection health in GET /v1/providers', () => {
  let fake: FakeVendor;
  let t: TestApp;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    t = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl, BREAKER_FAILURE_THRESHOLD: '2', BREAKER_COOLDOWN_MS: '600000' });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  const chat = (headers: Record<string, string>) =>
    t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
  const connection = async (headers: Record<string, string>) => (await t.app.inject({ method: 'GET', url: '/v1/providers', headers })).json().data[0];

  it('a failed attempt is the last error; consecutive failures open the circuit; a new key starts closed', async () => {
    const user = await createUser(t.app);
    await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
    const before = Date.now();
    fake.script({ kind: 'error', status: 401, message: `Incorrect API key provided: ${fake.apiKey}` });
    expect((await chat(user.headers)).statusCode).toBe(502); // the vendor refused our key: a gateway error
    const afterAuth = await connection(user.headers);
    expect(afterAuth.circuit_state).toBe('closed');
    expect(afterAuth.last_error).toMatchObject({ reason: 'auth_failed', status: 401 });
    expect(Date.parse(afterAuth.last_error.at)).toBeGreaterThanOrEqual(before - 1000);

    fake.script({ kind: 'error', status: 500 }, { kind: 'error', status: 500 }, { kind: 'error', status: 500 }, { kind: 'error', status: 500 });
    expect((await chat(user.headers)).statusCode).toBeGreaterThanOrEqual(500);
    const res = await t.app.inject({ method: 'GET', url: '/v1/providers', headers: user.headers });
    expect(res.json().data[0]).toMatchObject({ circuit_state: 'open', last_error: { reason: 'server_error', status: 500 } });
    expect(res.body).not.toContain(fake.apiKey);
    expect(res.body).not.toContain('Incorrect API key');

    // Saving a new key is a new circuit: closed, with no error yet.
    await t.app.inject({ method: 'PATCH', url: '/v1/providers/openai', headers: user.headers, payload: { api_key: `${fake.apiKey}-2` } });
    expect(await connection(user.headers)).toMatchObject({ circuit_state: 'closed', last_error: null });
  });

  it("another account's failures are not shown on yours", async () => {
    const user = await createUser(t.app);
    await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
    expect(await connection(user.headers)).toMatchObject({ circuit_state: 'closed', last_error: null });
  });
});
