// Issue 8, item 9: concurrent adds on one account. Of 50 parallel adds for one provider exactly
// one is told 201 (created), the rest 200 (updated); parallel adds for different providers get
// the documented auto-assigned priorities (0, then 10 above the highest) on every database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, createUser, type TestApp } from '../helpers/build.js';

describe('concurrent POST /v1/providers on a fresh account', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });
  afterAll(() => t.close());

  const add = (headers: Record<string, string>, provider: string, api_key: string) =>
    t.app.inject({ method: 'POST', url: '/v1/providers', headers, payload: { provider, api_key } });

  it.each([1, 2, 3, 4, 5])('round %i: 50 adds for one provider answer one 201 and 49 200, and store one row', async () => {
    const user = await createUser(t.app);
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => add(user.headers, 'openai', `sk-race-${String(i).padStart(4, '0')}`)));
    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    for (const res of responses) expect(res.json()).toMatchObject({ provider: 'openai', priority: 0, label: '', endpoint: null });
    const rows = await t.database.query<{ priority: number }>('select priority from provider_connections where account_id = $1', [user.id]);
    expect(rows).toEqual([{ priority: 0 }]);
  });

  it('six adds for different providers get priorities 0, 10, 20, 30, 40, 50', async () => {
    const providers = ['openai', 'anthropic', 'google', 'mistral', 'groq', 'deepseek'];
    for (let round = 0; round < 3; round++) {
      const user = await createUser(t.app);
      const responses = await Promise.all(providers.map((p) => add(user.headers, p, `sk-${p}-0123456789`)));
      expect(responses.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201, 201]);
      const answered = responses.map((r) => r.json<{ priority: number }>().priority).sort((a, b) => a - b);
      expect(answered).toEqual([0, 10, 20, 30, 40, 50]);
      const list = await t.app.inject({ method: 'GET', url: '/v1/providers', headers: user.headers });
      expect(list.json<{ data: Array<{ priority: number }> }>().data.map((c) => c.priority)).toEqual([0, 10, 20, 30, 40, 50]);
    }
  });
});
