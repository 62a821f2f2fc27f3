// Shared setup for the quota tests: an app on a fake OpenAI, a clock the test moves, and
// helpers to set limits and make calls.
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { adminHeaders, build, createKey, createUser, type TestApp } from '../helpers/build.js';

/** A clock the test moves by hand; starts at 2026-03-10T12:00:00.000Z, the start of a minute. */
export class FakeClock {
  constructor(public ms = Date.UTC(2026, 2, 10, 12, 0, 0)) {}
  readonly now = () => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
  /** To the first millisecond of the next UTC minute. */
  nextMinute(): void {
    this.ms = Math.floor(this.ms / 60_000) * 60_000 + 60_000;
  }
}

export type Limits = Partial<Record<'requests_per_minute' | 'tokens_per_minute' | 'usd_per_day' | 'usd_per_month', number | null>>;

export async function setAccountLimits(app: FastifyInstance, username: string, limits: Limits) {
  const res = await app.inject({ method: 'PUT', url: `/v1/admin/accounts/${username}/limits`, headers: adminHeaders, payload: limits });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

export async function setKeyLimits(app: FastifyInstance, keyId: string, limits: Limits) {
  const res = await app.inject({ method: 'PUT', url: `/v1/admin/api-keys/${keyId}/limits`, headers: adminHeaders, payload: limits });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

export interface QuotaHarness {
  fake: FakeVendor;
  testApp: TestApp;
  app: FastifyInstance;
  clock: FakeClock;
  close(): Promise<void>;
}

export async function startQuotaHarness(env: Record<string, string> = {}): Promise<QuotaHarness> {
  const fake = await startFakeOpenAI();
  const clock = new FakeClock();
  const testApp = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl, LADDER_MAX_CONCURRENT_CALLS: '1', ...env }, { clock: clock.now });
  return { fake, testApp, app: testApp.app, clock, close: async () => { await testApp.close(); await fake.close(); } };
}

/** A new account with an openai connection to the fake, and a second key on it. */
export async function quotaUser(h: QuotaHarness) {
  const user = await createUser(h.app);
  const res = await h.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: h.fake.apiKey } });
  expect(res.statusCode).toBe(201);
  const second = await createKey(h.app, user.username);
  return { ...user, second: { id: second.id, headers: { authorization: `Bearer ${second.key}` } } };
}

/** `hi` echoes as `echo: hi`: usage 2 + 8 = 10 tokens; with max_tokens 10 the estimate is 1 + 10 = 11. */
export const HI = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };

export function chat(app: FastifyInstance, headers: Record<string, string>, body: object = HI) {
  return app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: body });
}
