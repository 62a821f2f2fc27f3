// Provider connections through the public API: SPEC "Provider connection" and issue 3 item 2.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/client.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, ENCRYPTION_KEY, type TestApp } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

const OPENAI_KEY = 'sk-test-0123456789abcdefghijklmnop';
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Headers = Record<string, string>;

function add(app: FastifyInstance, headers: Headers, payload: unknown) {
  return app.inject({ method: 'POST', url: '/v1/providers', headers, payload: payload as object });
}
function patch(app: FastifyInstance, headers: Headers, provider: string, payload: unknown) {
  return app.inject({ method: 'PATCH', url: `/v1/providers/${provider}`, headers, payload: payload as object });
}
function list(app: FastifyInstance, headers: Headers) {
  return app.inject({ method: 'GET', url: '/v1/providers', headers });
}
function remove(app: FastifyInstance, headers: Headers, provider: string) {
  return app.inject({ method: 'DELETE', url: `/v1/providers/${provider}`, headers });
}

describe('provider connections', () => {
  let testApp: TestApp;
  let app: FastifyInstance;
  let headers: Headers;
  let accountId: string;
  /** This test's account's rows, read straight from the database. */
  const storedRows = <Row = Record<string, unknown>>(columns = '*') =>
    testApp.database.query<Row>(`select ${columns} from provider_connections p where account_id = $1`, [accountId]);

  beforeAll(async () => {
    testApp = await build();
    app = testApp.app;
  });
  afterAll(() => testApp.close());
  beforeEach(async () => {
    ({ headers, id: accountId } = await createUser(app));
  });

  it('creates a connection with 201 and answers in the list shape, never with the key', async () => {
    const before = Date.now();
    const res = await add(app, headers, { provider: 'openai', api_key: OPENAI_KEY, label: 'Work' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['endpoint', 'key_prefix', 'label', 'priority', 'provider', 'updated_at']);
    expect(body).toMatchObject({ provider: 'openai', label: 'Work', priority: 0, key_prefix: 'sk-test-', endpoint: null });
    expect(body.updated_at).toMatch(ISO_UTC);
    expect(Date.parse(body.updated_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(res.body).not.toContain(OPENAI_KEY);
    expect(res.body).not.toContain('0123456789');
  });

  it('lists connections in exactly the documented shape with a masked key prefix', async () => {
    await add(app, headers, { provider: 'openai', api_key: OPENAI_KEY });
    const res = await list(app, headers);
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expect(data).toHaveLength(1);
    expect(Object.keys(data[0]).sort()).toEqual(['circuit_state', 'endpoint', 'key_prefix', 'label', 'last_error', 'priority', 'provider', 'updated_at']);
    expect(data[0]).toMatchObject({ provider: 'openai', label: '', priority: 0, key_prefix: 'sk-test-', endpoint: null, circuit_state: 'closed', last_error: null });
    expect(data[0].updated_at).toMatch(ISO_UTC);
    expect(res.body).not.toContain(OPENAI_KEY);
  });

  it('masks short keys down to a quarter of their length', async () => {
    const res = await add(app, headers, { provider: 'groq', api_key: 'abcdefghijkl' });
    expect(res.json().key_prefix).toBe('abc');
    const tiny = await add(app, headers, { provider: 'xai', api_key: 'abc' });
    expect(tiny.json().key_prefix).toBe('');
  });

  it('a second POST for the same provider updates it (200) and keeps one row', async () => {
    await add(app, headers, { provider: 'openai', api_key: OPENAI_KEY, label: 'first', priority: 7 });
    const res = await add(app, headers, { provider: 'openai', api_key: 'sk-other-key-00000000000000000000', label: 'second' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ provider: 'openai', label: 'second', priority: 7, key_prefix: 'sk-other' });
    const { data } = (await list(app, headers)).json();
    expect(data.map((c: { provider: string; label: string }) => [c.provider, c.label])).toEqual([['openai', 'second']]);
    expect(await storedRows('provider, key_prefix')).toEqual([{ provider: 'openai', key_prefix: 'sk-other' }]);
  });

  it('auto-assigns priority 0 first, then 10 above the highest, capped at 1000', async () => {
    const first = await add(app, headers, { provider: 'openai', api_key: OPENAI_KEY });
    const second = await add(app, headers, { provider: 'anthropic', api_key: 'sk-ant-000000000000' });
    expect([first.json().priority, second.json().priority]).toEqual([0, 10]);
    const explicit = await add(app, headers, { provider: 'google', api_key: 'AIza0000000000000', priority: 995 });
    expect(explicit.json().priority).toBe(995);
    const capped = await add(app, headers, { provider: 'mistral', api_key: 'mistral-000000000000' });
    expect(capped.json().priority).toBe(1000);
    const again = await add(app, headers, { provider: 'groq', api_key: 'gsk_00000000000000' });
    expect(again.json().priority).toBe(1000);
    const { data } = (await list(app, headers)).json();
    // Routing order: priority ascending, ties by the older connection.
    expect(data.map((c: { provider: string }) => c.provider)).toEqual(['openai', 'anthropic', 'google', 'mistral', 'groq']);
  });

  it('accepts the priority bounds 0 and 1000', async () => {
    expect((await add(app, headers, { provider: 'openai', api_key: OPENAI_KEY, priority: 1000 })).json().priority).toBe(1000);
    expect((await add(app, headers, { provider: 'xai', api_key: OPENAI_KEY, priority: 0 })).json().priority).toBe(0);
  });

  describe('400 naming the field', () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['label longer than 64 characters', { label: 'x'.repeat(65) }, 'label'],
      ['priority -1', { priority: -1 }, 'priority'],
      ['priority 1001', { priority: 1001 }, 'priority'],
      ['priority 1.5', { priority: 1.5 }, 'priority'],
      ['priority "5"', { priority: '5' }, 'priority'],
      ['priority null', { priority: null }, 'priority'],
      ['an empty api_key', { api_key: '' }, 'api_key'],
      ['a whitespace api_key', { api_key: '   ' }, 'api_key'],
      ['an api_key with surrounding whitespace', { api_key: ` ${OPENAI_KEY}\n` }, 'api_key'],
      ['an api_key that is not a string', { api_key: 12345678 }, 'api_key'],
      ['an unknown field', { secret: 'x' }, 'secret'],
    ];
    for (const [what, change, param] of cases) {
      it(`refuses ${what}`, async () => {
        const res = await add(app, headers, { provider: 'openai', api_key: OPENAI_KEY, ...change });
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toMatchObject({ type: 'invalid_request_error', param });
        expect(res.json().error.message).toContain(param);
        expect((await list(app, headers)).json().data).toEqual([]);
      });
    }

    it('accepts a label of exactly 64 characters', async () => {
      const res = await add(app, headers, { provider: 'openai', api_key: OPENAI_KEY, label: 'x'.repeat(64) });
      expect(res.statusCode).toBe(201);
    });

    for (const field of ['provider', 'api_key']) {
      it(`missing ${field} is missing_required_field`, async () => {
        const payload: Record<string, unknown> = { provider: 'openai', api_key: OPENAI_KEY };
        delete payload[field];
        const res = await add(app, headers, payload);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({
          error: { message: `Missing required field: ${field}.`, type: 'invalid_request_error', code: 'missing_required_field', param: field },
        });
      });
    }

    it('unknown provider is unknown_provider', async () => {
      const res = await add(app, headers, { provider: 'skynet', api_key: OPENAI_KEY });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'unknown_provider', param: 'provider', type: 'invalid_request_error' });
      expect(res.json().error.message).toContain('skynet');
    });

    it('an endpoint on a provider without endpoint support is endpoint_not_supported', async () => {
      const res = await add(app, headers, { provider: 'openai', api_key: OPENAI_KEY, endpoint: 'https://api.example.test/v1' });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'endpoint_not_supported', param: 'endpoint' });
    });

    for (const provider of ['custom', 'azure-openai']) {
      it(`${provider} without an endpoint is missing_required_field naming endpoint`, async () => {
        const res = await add(app, headers, { provider, api_key: OPENAI_KEY });
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toMatchObject({ code: 'missing_required_field', param: 'endpoint', type: 'invalid_request_error' });
        expect(res.json().error.message).toContain('endpoint');
      });
    }

    it('a malformed endpoint is invalid_endpoint', async () => {
      for (const endpoint of ['not a url', 'ftp://127.0.0.1/v1', 'https://user:pw@127.0.0.1/v1', 'https://127.0.0.1/v1?x=1']) {
        const res = await add(app, headers, { provider: 'custom', api_key: OPENAI_KEY, endpoint });
        expect(res.statusCode, endpoint).toBe(400);
        expect(res.json().error, endpoint).toMatchObject({ code: 'invalid_endpoint', param: 'endpoint' });
      }
    });
  });

  it('stores an endpoint for custom and azure-openai; an update may omit it', async () => {
    const res = await add(app, headers, { provider: 'custom', api_key: 'ollama', endpoint: 'http://localhost:11434/v1' });
    expect(res.statusCode).toBe(201);
    expect(res.json().endpoint).toBe('http://localhost:11434/v1');
    const again = await add(app, headers, { provider: 'custom', api_key: 'ollama-2' });
    expect(again.statusCode).toBe(200);
    expect(again.json().endpoint).toBe('http://localhost:11434/v1');
  });

  describe('PATCH', () => {
    beforeEach(async () => {
      await add(app, headers, { provider: 'openai', api_key: OPENAI_KEY, label: 'Work', priority: 5 });
    });

    it('changes only the label', async () => {
      const res = await patch(app, headers, 'openai', { label: 'Home' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ provider: 'openai', label: 'Home', priority: 5, key_prefix: 'sk-test-', endpoint: null });
    });

    it('changes only the priority', async () => {
      const res = await patch(app, headers, 'openai', { priority: 900 });
      expect(res.json()).toMatchObject({ label: 'Work', priority: 900, key_prefix: 'sk-test-' });
    });

    it('changes only the key, and moves updated_at', async () => {
      const sealedBefore = (await storedRows<{ api_key_ciphertext: string }>('api_key_ciphertext'))[0]!.api_key_ciphertext;
      const before = (await list(app, headers)).json().data[0].updated_at;
      await new Promise((resolve) => setTimeout(resolve, 5));
      const res = await patch(app, headers, 'openai', { api_key: 'sk-rotated-0000000000000000000000' });
      expect(res.json()).toMatchObject({ label: 'Work', priority: 5, key_prefix: 'sk-rotat' });
      expect(Date.parse(res.json().updated_at)).toBeGreaterThan(Date.parse(before));
      const sealedAfter = (await storedRows<{ api_key_ciphertext: string }>('api_key_ciphertext'))[0]!.api_key_ciphertext;
      expect(sealedAfter).not.toBe(sealedBefore);
    });

    it('changes the endpoint of a provider that supports one', async () => {
      await add(app, headers, { provider: 'custom', api_key: 'k', endpoint: 'http://localhost:11434/v1' });
      const res = await patch(app, headers, 'custom', { endpoint: 'http://127.0.0.1:8000/v1' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ provider: 'custom', endpoint: 'http://127.0.0.1:8000/v1', key_prefix: '' });
    });

    it('refuses an endpoint for a provider that does not take one', async () => {
      const res = await patch(app, headers, 'openai', { endpoint: 'https://api.example.test/v1' });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'endpoint_not_supported', param: 'endpoint' });
    });

    it('validates the fields it is sent', async () => {
      for (const [payload, param] of [
        [{ priority: 1001 }, 'priority'],
        [{ priority: '5' }, 'priority'],
        [{ label: 'x'.repeat(65) }, 'label'],
        [{ api_key: '' }, 'api_key'],
        [{ api_key: '  ' }, 'api_key'],
        [{ provider: 'anthropic' }, 'provider'],
      ] as const) {
        const res = await patch(app, headers, 'openai', payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expect(res.json().error.param, JSON.stringify(payload)).toBe(param);
      }
      expect((await list(app, headers)).json().data[0]).toMatchObject({ label: 'Work', priority: 5, key_prefix: 'sk-test-' });
    });

    it('with an empty body changes nothing', async () => {
      const res = await patch(app, headers, 'openai', {});
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ label: 'Work', priority: 5, key_prefix: 'sk-test-' });
    });

    it('of a provider without a connection is 404 provider_connection_not_found', async () => {
      for (const provider of ['anthropic', 'skynet']) {
        const res = await patch(app, headers, provider, { label: 'x' });
        expect(res.statusCode).toBe(404);
        expect(res.json().error).toMatchObject({ code: 'provider_connection_not_found' });
        expect(res.json().error.message).toContain(provider);
      }
    });
  });

  it('DELETE answers {ok: true} and the connection is gone', async () => {
    await add(app, headers, { provider: 'openai', api_key: OPENAI_KEY });
    await add(app, headers, { provider: 'anthropic', api_key: 'sk-ant-000000000000' });
    const res = await remove(app, headers, 'openai');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect((await list(app, headers)).json().data.map((c: { provider: string }) => c.provider)).toEqual(['anthropic']);
    const again = await remove(app, headers, 'openai');
    expect(again.statusCode).toBe(404);
    expect(again.json().error.code).toBe('provider_connection_not_found');
    expect((await patch(app, headers, 'openai', { label: 'x' })).statusCode).toBe(404);
  });

  it('DELETE of an unknown provider is 404', async () => {
    const res = await remove(app, headers, 'skynet');
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('provider_connection_not_found');
  });

  it('connections belong to one account: another cannot see, change or delete them', async () => {
    await add(app, headers, { provider: 'openai', api_key: OPENAI_KEY, label: 'mine' });
    const other = await createUser(app);
    expect((await list(app, other.headers)).json()).toEqual({ data: [] });
    expect((await patch(app, other.headers, 'openai', { label: 'theirs' })).statusCode).toBe(404);
    expect((await remove(app, other.headers, 'openai')).statusCode).toBe(404);
    // The other account's own openai connection is a separate row, not an update of ours.
    expect((await add(app, other.headers, { provider: 'openai', api_key: 'sk-theirs-000000000000' })).statusCode).toBe(201);
    const mine = (await list(app, headers)).json().data;
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ label: 'mine', key_prefix: 'sk-test-', priority: 0 });
  });

  it('every connection route needs an API key', async () => {
    for (const req of [
      { method: 'GET', url: '/v1/providers' },
      { method: 'POST', url: '/v1/providers', payload: { provider: 'openai', api_key: OPENAI_KEY } },
      { method: 'PATCH', url: '/v1/providers/openai', payload: { label: 'x' } },
      { method: 'DELETE', url: '/v1/providers/openai' },
    ] as const) {
      for (const auth of [{}, { authorization: 'Bearer ldr_live_nope' }]) {
        const res = await app.inject({ ...req, headers: auth });
        expect(res.statusCode, `${req.method} ${JSON.stringify(auth)}`).toBe(401);
        expect(res.json().error.type).toBe('authentication_error');
      }
    }
    expect(await storedRows()).toEqual([]);
  });

  it('the catalog needs no API key', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/providers/catalog' });
    expect(res.statusCode).toBe(200);
    const ids = res.json().data.map((e: { id: string }) => e.id);
    expect(ids).toEqual(expect.arrayContaining(['openai', 'anthropic', 'google', 'azure-openai', 'custom']));
  });

  it('stores no provider key in plaintext in any column', async () => {
    const keys = [OPENAI_KEY, 'sk-ant-api03-SECRETSECRETSECRET', 'custom-server-token-XYZ-987654'];
    await add(app, headers, { provider: 'openai', api_key: keys[0] });
    await add(app, headers, { provider: 'anthropic', api_key: keys[1] });
    await add(app, headers, { provider: 'custom', api_key: keys[2], endpoint: 'http://localhost:11434/v1' });
    const rows = await storedRows();
    expect(rows).toHaveLength(3);
    const dumped = await storedRows<{ row: string }>('row_to_json(p)::text as row');
    const text = JSON.stringify(rows) + dumped.map((d) => d.row).join('\n');
    for (const key of keys) {
      expect(text).not.toContain(key);
      // Not even the part after the shown prefix.
      expect(text).not.toContain(key.slice(8));
      expect(text).not.toContain(Buffer.from(key).toString('base64'));
    }
    for (const row of rows) expect(String(row.api_key_ciphertext)).toMatch(/^v1\.[0-9a-f]{12}\./);
  });
});

describe('provider connections: SSRF policy with ALLOW_PRIVATE_ENDPOINTS=false', () => {
  let testApp: TestApp;
  let headers: Headers;

  beforeAll(async () => {
    testApp = await build({ ALLOW_PRIVATE_ENDPOINTS: 'false' });
    ({ headers } = await createUser(testApp.app));
  });
  afterAll(() => testApp.close());
  afterEach(async () => {
    expect((await list(testApp.app, headers)).json().data.filter((c: { provider: string }) => c.provider === 'custom')).toEqual([]);
  });

  const refused: Array<[string, string]> = [
    ['https://127.0.0.1/v1', 'endpoint_not_allowed'],
    ['https://127.1.2.3:8443/v1', 'endpoint_not_allowed'],
    ['https://10.0.0.1', 'endpoint_not_allowed'],
    ['https://172.16.5.4/v1', 'endpoint_not_allowed'],
    ['https://192.168.1.10/v1', 'endpoint_not_allowed'],
    ['https://169.254.169.254', 'endpoint_not_allowed'],
    ['https://169.254.169.254/latest/meta-data', 'endpoint_not_allowed'],
    ['https://[::1]', 'endpoint_not_allowed'],
    ['https://[::ffff:127.0.0.1]/v1', 'endpoint_not_allowed'],
    ['https://[fd00:ec2::254]/v1', 'endpoint_not_allowed'],
    ['https://0.0.0.0/v1', 'endpoint_not_allowed'],
    ['https://localhost:11434/v1', 'endpoint_not_allowed'],
    ['http://example.com', 'endpoint_not_allowed'],
    ['http://127.0.0.1:11434/v1', 'endpoint_not_allowed'],
  ];
  for (const [endpoint, code] of refused) {
    it(`refuses ${endpoint} with ${code}`, async () => {
      const res = await add(testApp.app, headers, { provider: 'custom', api_key: 'k-123456', endpoint });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code, param: 'endpoint' });
    });
  }

  it('refuses a private endpoint for azure-openai and on PATCH too', async () => {
    const res = await add(testApp.app, headers, { provider: 'azure-openai', api_key: 'k-123456', endpoint: 'https://10.1.2.3' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('endpoint_not_allowed');
    const ok = await add(testApp.app, headers, { provider: 'azure-openai', api_key: 'k-123456', endpoint: 'https://93.184.215.14' });
    expect(ok.statusCode).toBe(201);
    const moved = await patch(testApp.app, headers, 'azure-openai', { endpoint: 'https://169.254.169.254' });
    expect(moved.statusCode).toBe(400);
    expect(moved.json().error.code).toBe('endpoint_not_allowed');
    expect((await list(testApp.app, headers)).json().data[0].endpoint).toBe('https://93.184.215.14');
  });

  it('accepts a public IP literal over https', async () => {
    const res = await add(testApp.app, headers, { provider: 'custom', api_key: 'k-123456', endpoint: 'https://8.8.8.8/v1' });
    expect(res.statusCode).toBe(201);
    expect((await remove(testApp.app, headers, 'custom')).statusCode).toBe(200);
  });
});

describe('provider keys at rest: unreadable keys and key rotation', () => {
  const KEY_A = ENCRYPTION_KEY;
  const KEY_B = Buffer.alloc(32, 42).toString('base64');
  let database: Database;
  let fake: FakeVendor;
  const apps: TestApp[] = [];
  const open = async (env: Record<string, string>, on: Database = database) => {
    const testApp = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl, ...env }, { database: on });
    apps.push(testApp);
    return testApp;
  };
  const chat = (app: FastifyInstance, headers: Headers) =>
    app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });

  beforeAll(async () => {
    database = await openTestDatabase();
    fake = await startFakeOpenAI({ apiKey: OPENAI_KEY });
  });
  afterEach(async () => {
    for (const testApp of apps.splice(0)) await testApp.close();
    fake.reset();
  });
  afterAll(async () => {
    await fake.close();
    await database.close();
  });

  async function userWithKey(testApp: TestApp) {
    const user = await createUser(testApp.app);
    expect((await add(testApp.app, user.headers, { provider: 'openai', api_key: OPENAI_KEY })).statusCode).toBe(201);
    return user;
  }

  function expectUnreadable(res: Awaited<ReturnType<typeof chat>>, cause: RegExp) {
    expect(res.statusCode).toBe(500);
    expect(res.json().error).toMatchObject({ type: 'api_error', code: 'provider_key_unreadable' });
    expect(res.json().error.message).toContain('"openai"');
    expect(res.json().error.message).toMatch(cause);
    expect(res.body).not.toContain(OPENAI_KEY);
    expect(fake.requests).toHaveLength(0);
  }

  it('a key sealed under an encryption key that is no longer configured is reported, not skipped', async () => {
    const { headers } = await userWithKey(await open({ ENCRYPTION_KEY: KEY_A }));
    const other = await open({ ENCRYPTION_KEY: KEY_B });
    expectUnreadable(await chat(other.app, headers), /not configured/);
    // The list, where the owner goes to save the key again, still answers.
    const listed = await other.app.inject({ method: 'GET', url: '/v1/providers', headers });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data).toMatchObject([{ provider: 'openai', circuit_state: 'closed', last_error: null }]);
  });

  it('a ciphertext whose key id was changed in the database is reported as unreadable', async () => {
    const testApp = await open({});
    const { headers, id } = await userWithKey(testApp);
    await database.query(
      `update provider_connections set api_key_ciphertext = regexp_replace(api_key_ciphertext, '^v1\\.[0-9a-f]+\\.', 'v1.000000000000.') where account_id = $1`,
      [id],
    );
    expectUnreadable(await chat(testApp.app, headers), /000000000000.*not configured/);
  });

  it('a tampered ciphertext fails authentication and is reported as unreadable', async () => {
    const testApp = await open({});
    const { headers, id } = await userWithKey(testApp);
    const rows = await database.query<{ api_key_ciphertext: string }>('select api_key_ciphertext from provider_connections where account_id = $1', [id]);
    const sealed = rows[0]!.api_key_ciphertext;
    // Change one character in the middle of the sealed body: AES-GCM must notice.
    const parts = sealed.split('.');
    const body = parts[4]!;
    const i = Math.floor(body.length / 2);
    parts[4] = body.slice(0, i) + (body[i] === 'A' ? 'B' : 'A') + body.slice(i + 1);
    await database.query('update provider_connections set api_key_ciphertext = $1 where account_id = $2', [parts.join('.'), id]);
    expectUnreadable(await chat(testApp.app, headers), /failed authentication/);
  });

  it('a key sealed for one account cannot be moved to another account', async () => {
    const testApp = await open({});
    const victim = await userWithKey(testApp);
    const thief = await createUser(testApp.app);
    await database.query(
      `insert into provider_connections (account_id, provider, priority, api_key_ciphertext, key_prefix)
       select $2, provider, priority, api_key_ciphertext, key_prefix from provider_connections where account_id = $1`,
      [victim.id, thief.id],
    );
    expectUnreadable(await chat(testApp.app, thief.headers), /failed authentication/);
  });

  it('rotation: reencryptAll reseals under the new key, after which the old key is not needed', async () => {
    // A database of its own, so the totals are exactly this test's.
    const own = await openTestDatabase();
    try {
      const openOwn = (env: Record<string, string>) => open(env, own);
      const { headers } = await userWithKey(await openOwn({ ENCRYPTION_KEY: KEY_A }));
      const sealedNow = async () => (await own.query<{ api_key_ciphertext: string }>('select api_key_ciphertext from provider_connections'))[0]!.api_key_ciphertext;
      const underA = await sealedNow();

      const rotating = await openOwn({ ENCRYPTION_KEY: KEY_B, ENCRYPTION_KEY_PREVIOUS: KEY_A });
      // During the rotation both keys read: the service keeps working.
      expect((await chat(rotating.app, headers)).statusCode).toBe(200);
      expect(await rotating.app.connections.reencryptAll()).toEqual({ reencrypted: 1, total: 1 });
      // Idempotent: nothing is left under the old key.
      expect(await rotating.app.connections.reencryptAll()).toEqual({ reencrypted: 0, total: 1 });

      const underB = await sealedNow();
      expect(underB).not.toBe(underA);
      expect(underB.split('.')[1]).toBe(rotating.app.secretBox.currentKeyId);
      expect(underB.split('.')[1]).not.toBe(underA.split('.')[1]);
      expect(underB).not.toContain(OPENAI_KEY);

      const onlyB = await openOwn({ ENCRYPTION_KEY: KEY_B });
      fake.reset();
      const res = await chat(onlyB.app, headers);
      expect(res.statusCode).toBe(200);
      expect(res.json().choices[0].message.content).toBe('echo: hi');
      expect(fake.requests).toHaveLength(1);
      expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);

      fake.reset();
      const onlyA = await openOwn({ ENCRYPTION_KEY: KEY_A });
      expectUnreadable(await chat(onlyA.app, headers), /not configured/);
    } finally {
      for (const testApp of apps.splice(0)) await testApp.close();
      await own.close();
    }
  });

  it('rotation: an unreadable key does not stop the others from being resealed, and is reported', async () => {
    const own = await openTestDatabase();
    try {
      const good = await userWithKey(await open({ ENCRYPTION_KEY: KEY_A }, own));
      const lost = await userWithKey(await open({ ENCRYPTION_KEY: Buffer.alloc(32, 99).toString('base64') }, own));
      const lostId = (await own.query<{ id: string }>('select id from provider_connections where account_id = $1', [lost.id]))[0]!.id;

      const rotating = await open({ ENCRYPTION_KEY: KEY_B, ENCRYPTION_KEY_PREVIOUS: KEY_A }, own);
      const failure = await rotating.app.connections.reencryptAll().then(
        () => null,
        (error: unknown) => error as { code: string; message: string },
      );
      expect(failure?.code).toBe('provider_key_unreadable');
      expect(failure?.message).toContain(`Resealed 1 of 2`);
      expect(failure?.message).toContain(`${lostId} (openai)`);
      expect(failure?.message).not.toContain(OPENAI_KEY);

      const keyIds = await own.query<{ account_id: string; kid: string }>(
        "select account_id, split_part(api_key_ciphertext, '.', 2) as kid from provider_connections",
      );
      expect(keyIds.find((r) => r.account_id === good.id)?.kid).toBe(rotating.app.secretBox.currentKeyId);
      expect(keyIds.find((r) => r.account_id === lost.id)?.kid).not.toBe(rotating.app.secretBox.currentKeyId);
    } finally {
      for (const testApp of apps.splice(0)) await testApp.close();
      await own.close();
    }
  });
});
