// Shared setup for the ladder end-to-end tests: the real app and provider router against a
// fake OpenAI whose echo reply is `echo: <prompt>` with usage prompt = prompt characters,
// completion = reply characters (see test/fakes/vendors.ts).
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { costOf, createPriceTable } from '../../src/pricing/prices.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, type TestApp } from '../helpers/build.js';

export const SI = '[System Instruction]';
export const MODEL = 'gpt-4o-mini';
export type User = Awaited<ReturnType<typeof createUser>>;

export interface Harness {
  fake: FakeVendor;
  testApp: TestApp;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** Calls run one at a time, so the fake sees nodes in node order and scripts apply predictably. */
export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const fake = await startFakeOpenAI();
  const testApp = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl, LADDER_MAX_CONCURRENT_CALLS: '1', ...env });
  return {
    fake,
    testApp,
    app: testApp.app,
    close: async () => {
      await testApp.close();
      await fake.close();
    },
  };
}

/** A user with an openai connection to the fake. */
export async function userWithOpenAI(h: Harness): Promise<User> {
  const user = await createUser(h.app);
  const res = await h.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: h.fake.apiKey } });
  expect(res.statusCode).toBe(201);
  return user;
}

export async function saveLadder(h: Harness, user: User, slug: string, config: unknown, extra: object = {}) {
  const res = await h.app.inject({ method: 'PUT', url: `/v1/${user.username}/${slug}`, headers: user.headers, payload: { config, ...extra } });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json<{ id: string; version: number }>();
}

export function runLadder(h: Harness, user: User, slug: string, body: Record<string, unknown>, author = user.username) {
  return h.app.inject({ method: 'POST', url: `/v1/${author}/${slug}/chat/completions`, headers: user.headers, payload: body });
}

export const ask = (content: string, extra: Record<string, unknown> = {}) => ({ model: MODEL, messages: [{ role: 'user', content }], ...extra });

/** The prompts the fake received, in order; each request must be one user message. */
export function promptsReceived(fake: FakeVendor): string[] {
  return fake.requests.map((r) => {
    expect(r.body.model).toBe(MODEL);
    expect(r.body.messages).toHaveLength(1);
    expect(r.body.messages[0].role).toBe('user');
    return r.body.messages[0].content as string;
  });
}

export const echo = (prompt: string) => `echo: ${prompt}`;

/** Usage and spend of echo calls on these prompts, as the fake and the price table count them. */
export function echoAccounting(prompts: string[]) {
  const prices = createPriceTable();
  const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let spendNanos = 0;
  for (const prompt of prompts) {
    const call = { prompt_tokens: prompt.length, completion_tokens: echo(prompt).length, total_tokens: prompt.length + echo(prompt).length };
    usage.prompt_tokens += call.prompt_tokens;
    usage.completion_tokens += call.completion_tokens;
    usage.total_tokens += call.total_tokens;
    spendNanos += costOf(MODEL, call, prices);
  }
  return { usage, spendNanos };
}

export interface InstanceRow {
  id: string;
  ladder_id: string | null;
  ladder_version: number;
  author: string;
  slug: string;
  account_id: string;
  api_key_id: string | null;
  mode: string;
  model: string;
  input: string;
  knobs: Record<string, number>;
  status: string;
  answer: string | null;
  error: { status: number; type: string; code: string; message: string } | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  /** Raw bigint: a number from PGlite, a string from node-postgres. */
  spend_nanos: number | string;
  model_calls: number;
  trace: Array<{ pass: number; depth: number; stepId: string; groupId?: string; recursionAnswer?: string; nodes: Array<Record<string, any>> }> | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export async function instanceRow(h: Harness, id: string): Promise<InstanceRow> {
  const [row] = await h.testApp.database.query<InstanceRow>('select * from instances where id = $1', [id]);
  expect(row, `instance ${id}`).toBeDefined();
  return row!;
}

export async function instanceCount(h: Harness): Promise<number> {
  return Number((await h.testApp.database.query<{ n: string }>('select count(*) as n from instances'))[0]!.n);
}
