// `ladder-admin` while a server holds the embedded database: every command goes through that
// server's admin API, found from the same settings (HOST, PORT, ADMIN_TOKEN) and DATA_DIR.
// The real built server and the real bin, as users run them.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { spawnServer, type SpawnedServer } from '../helpers/spawned-server.js';

const BIN = path.resolve('dist/src/cli/admin.js');
const ADMIN_TOKEN = 'admin-token-for-the-cli-0123456789';

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}

describe('ladder-admin while a server holds the embedded database', { timeout: 240_000 }, () => {
  let server: SpawnedServer;
  let fake: FakeVendor;
  let port: number;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    port = await freePort();
    server = await spawnServer({ PORT: String(port), ADMIN_TOKEN, LOG_LEVEL: 'info', WORKER_CONCURRENCY: '2' });
    await server.url();
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await fake?.close();
  });

  function run(args: string[], env: Record<string, string> = {}, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(BIN, args, {
        env: { PATH: process.env.PATH, DATA_DIR: server.dataDir, PORT: String(port), ADMIN_TOKEN, LOG_LEVEL: 'silent', ...env },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(input);
    });
  }

  async function json(args: string[], env: Record<string, string> = {}, input = '') {
    const result = await run([...args, '--json'], env, input);
    try {
      return { code: result.code, out: JSON.parse(result.code === 0 ? result.stdout : result.stderr) };
    } catch {
      throw new Error(`ladder-admin ${args.join(' ')} answered ${result.code}: ${result.stdout}${result.stderr}`);
    }
  }

  /** POST on the server over HTTPS with an API key, trusting its generated certificate. */
  async function post(route: string, key: string, body: unknown): Promise<{ status: number; body: any }> {
    const ca = readFileSync(path.join(server.dataDir, 'tls', 'localhost.crt'), 'utf8');
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const req = https.request(`${`https://127.0.0.1:${port}`}${route}`, {
        method: 'POST', ca, agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
    let text = '';
    for await (const chunk of res) text += String(chunk);
    return { status: res.statusCode!, body: JSON.parse(text) };
  }

  it('accounts, keys, limits, connections, ladders, runs and maintenance all work through the admin API', async () => {
    expect(await json(['create-account', 'remote-alice'])).toMatchObject({ code: 0, out: { username: 'remote-alice', id: expect.any(String) } });
    expect(await json(['create-account', 'remote-alice'])).toMatchObject({ code: 1, out: { error: { code: 'username_taken' } } });
    expect((await json(['list-accounts'])).out.data.map((a: { username: string }) => a.username)).toEqual(['remote-alice']);

    const key = await json(['create-key', 'remote-alice', '--name', 'laptop']);
    expect(key).toMatchObject({ code: 0, out: { key: expect.stringMatching(/^ldr_live_/), name: 'laptop', access: { mode: 'unrestricted', ladders: [] } } });
    expect((await json(['list-keys', 'remote-alice'])).out.data).toEqual([expect.objectContaining({ id: key.out.id, revoked_at: null })]);

    const limits = await json(['limits', 'remote-alice', '--rpm', '120']);
    expect(limits.out.data[0]).toEqual({ subject: 'account remote-alice', requests_per_minute: 120, tokens_per_minute: null, usd_per_day: null, usd_per_month: null });
    const keyLimits = await json(['limits', 'remote-alice', '--key', key.out.id, '--usd-day', '2']);
    expect(keyLimits.out.data[1]).toMatchObject({ subject: `key ${key.out.id} (${key.out.key_prefix})`, usd_per_day: 2, requests_per_minute: null });
    expect(await json(['limits', 'remote-alice', '--rpm', 'lots'])).toMatchObject({ code: 1, out: { error: { code: 'invalid_value' } } });

    // The server's endpoint rule (spawned with ALLOW_PRIVATE_ENDPOINTS=true) lets the local fake in.
    const connection = await json(['set-connection', 'remote-alice', 'custom', '--endpoint', fake.baseUrl], {}, `${fake.apiKey}\n`);
    expect(connection).toMatchObject({ code: 0, out: { provider: 'custom', endpoint: fake.baseUrl, created: true } });
    expect((await json(['list-connections', 'remote-alice'])).out.data).toEqual([expect.objectContaining({ provider: 'custom', endpoint: fake.baseUrl })]);

    const pushed = await json(['push-ladder', 'remote-alice', 'examples/draft-and-refine.yaml', 'examples/debate.yaml']);
    expect(pushed.out.data.map((l: { slug: string; version: number }) => [l.slug, l.version])).toEqual([['draft-and-refine', 1], ['debate', 1]]);
    expect(pushed.out.data[0]).not.toHaveProperty('config');
    const again = await json(['push-ladder', 'remote-alice', 'examples/draft-and-refine.yaml', '--visibility', 'public']);
    expect(again.out).toMatchObject({ slug: 'draft-and-refine', version: 2, usage_visibility: 'public' });
    expect((await json(['list-ladders', 'remote-alice'])).out.data.map((l: { slug: string }) => l.slug).sort()).toEqual(['debate', 'draft-and-refine']);
    expect((await json(['show-ladder', 'remote-alice/draft-and-refine', '--version', '1'])).out).toMatchObject({ version: 1, slug: 'draft-and-refine', config: { exit: 'refine' } });
    expect(await json(['show-ladder', 'remote-alice/nope'])).toMatchObject({ code: 1, out: { error: { code: 'ladder_not_found' } } });
    expect(await json(['delete-ladder', 'remote-alice/debate'])).toEqual({ code: 0, out: { deleted: 'remote-alice/debate' } });

    // A run through the API; the CLI then lists and shows it.
    const ran = await post('/v1/remote-alice/draft-and-refine/chat/completions', key.out.key, { model: 'llama3.2', messages: [{ role: 'user', content: 'Hi' }] });
    expect(ran.status).toBe(200);
    const runs = await json(['list-instances', '--account', 'remote-alice']);
    expect(runs.out.data).toEqual([expect.objectContaining({ status: 'completed', ladder: 'remote-alice/draft-and-refine@v2', model: 'llama3.2', model_calls: 2 })]);
    expect((await json(['list-instances', '--status', 'failed'])).out.data).toEqual([]);
    const shown = await json(['show-instance', runs.out.data[0].id]);
    expect(shown.out).toMatchObject({ id: runs.out.data[0].id, status: 'completed', answer: ran.body.choices[0].message.content, error: null });
    expect(await json(['show-instance', 'nope'])).toMatchObject({ code: 1, out: { error: { code: 'instance_not_found' } } });
    expect(await json(['show-instance', '00000000-0000-4000-8000-000000000000'])).toMatchObject({ code: 1, out: { error: { code: 'instance_not_found' } } });

    expect(await json(['reencrypt'])).toEqual({ code: 0, out: { reencrypted: 0, total: 1 } });
    expect(await json(['migrate'])).toEqual({ code: 0, out: { migrated: true } });
    expect(await json(['delete-connection', 'remote-alice', 'custom'])).toEqual({ code: 0, out: { deleted: 'custom' } });
    expect(await json(['revoke-key', key.out.id])).toEqual({ code: 0, out: { ok: true } });
    expect(await json(['delete-account', 'remote-alice', '--yes'])).toEqual({ code: 0, out: { deleted: 'remote-alice' } });
    expect((await json(['list-accounts'])).out.data).toEqual([]);
  });

  it('key scope and expiry, list by name, show, disable, enable and the audit log work through the admin API too', async () => {
    expect((await json(['create-account', 'remote-bob'])).code).toBe(0);
    expect((await json(['create-account', 'remote-carol'])).code).toBe(0);
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const created = await json(['create-key', 'remote-bob', '--scope', 'manage', '--expires', expires, '--name', 'ops']);
    expect(created).toMatchObject({ code: 0, out: { scope: 'manage', expires_at: expires, name: 'ops', key: expect.stringMatching(/^ldr_live_/) } });
    expect(created.out).not.toHaveProperty('revoked_at');
    expect((await json(['create-key', 'remote-bob'])).out).toMatchObject({ scope: 'use', expires_at: null });
    expect((await json(['list-keys', 'remote-bob'])).out.data.map((k: { scope: string; expires_at: string | null }) => [k.scope, k.expires_at])).toEqual([['manage', expires], ['use', null]]);
    expect(await json(['create-key', 'remote-bob', '--expires', '2001-01-01T00:00:00Z'])).toMatchObject({ code: 1, out: { error: { code: 'invalid_expires_at' } } });

    expect((await json(['list-accounts', '--name', 'bob'])).out.data).toEqual([
      { id: expect.any(String), username: 'remote-bob', created_at: expect.any(String), disabled: false, disabled_at: null, key_count: 2 },
    ]);
    expect((await json(['list-accounts'])).out.data.map((a: { username: string }) => a.username)).toEqual(['remote-bob', 'remote-carol']);
    expect((await json(['show-account', 'remote-bob'])).out).toMatchObject({ username: 'remote-bob', key_count: 2, disabled: false, this_month: { requests: 0, cost_usd: 0 } });
    expect(await json(['disable-account', 'remote-bob'])).toEqual({ code: 0, out: { username: 'remote-bob', disabled: true, changed: true, runs_cancelled: 0 } });
    expect((await json(['show-account', 'remote-bob'])).out).toMatchObject({ disabled: true, disabled_at: expect.any(String) });
    expect(await json(['disable-account', 'remote-bob'])).toMatchObject({ out: { changed: false } });
    // The server refuses the disabled account's keys.
    const refused = await post('/v1/chat/completions', created.out.key, { model: 'x', messages: [{ role: 'user', content: 'Hi' }] });
    expect(refused).toMatchObject({ status: 401, body: { error: { code: 'account_disabled' } } });
    expect(await json(['enable-account', 'remote-bob'])).toEqual({ code: 0, out: { username: 'remote-bob', disabled: false, changed: true, runs_cancelled: 0 } });
    expect(await json(['show-account', 'nobody-at-all'])).toMatchObject({ code: 1, out: { error: { code: 'account_not_found' } } });

    expect(await json(['delete-account', 'remote-carol', '--yes'])).toEqual({ code: 0, out: { deleted: 'remote-carol' } });
    // Through the server the admin token makes the change: the actor is `admin`.
    const audit = await json(['audit', '--limit', '150']);
    const mine = audit.out.data.filter((e: { account: string | null }) => e.account === 'remote-bob' || e.account === 'remote-carol');
    expect(mine.map((e: { action: string; account: string; actor: string }) => [e.action, e.account, e.actor])).toEqual([
      ['account.deleted', 'remote-carol', 'admin'],
      ['account.enabled', 'remote-bob', 'admin'],
      ['account.disabled', 'remote-bob', 'admin'],
      ['api_key.created', 'remote-bob', 'admin'],
      ['api_key.created', 'remote-bob', 'admin'],
      ['account.created', 'remote-carol', 'admin'],
      ['account.created', 'remote-bob', 'admin'],
    ]);
    expect((await json(['audit', '--account', 'remote-carol'])).out.data).toHaveLength(2);
    // --limit and --action reach the server: the newest creation only.
    expect((await json(['audit', '--limit', '1', '--action', 'account.created'])).out.data).toEqual([expect.objectContaining({ action: 'account.created', account: 'remote-carol' })]);
    expect(await json(['delete-account', 'remote-bob', '--yes'])).toEqual({ code: 0, out: { deleted: 'remote-bob' } });
  });

  it('create-key without arguments is a usage error (exit 2), with or without the admin token', async () => {
    const usage = { code: 2, out: { error: { message: 'missing username', type: 'usage_error', code: 'usage' } } };
    expect(await json(['create-key'])).toEqual(usage);
    expect(await json(['create-key'], { ADMIN_TOKEN: '' })).toEqual(usage);
  });

  it('says exactly what is missing when the server cannot be used', async () => {
    const noToken = await json(['list-accounts'], { ADMIN_TOKEN: '' });
    expect(noToken.code).toBe(1);
    expect(noToken.out.error).toMatchObject({ type: 'connection_error', code: 'server_unreachable' });
    expect(noToken.out.error.message).toMatch(new RegExp(`^The embedded database in .+ is in use by process ${server.child.pid} \\(a running server\\), so this command goes through its admin API, which needs its admin token: set ADMIN_TOKEN \\(or ADMIN_TOKEN_FILE\\)`));

    const wrong = await json(['list-accounts'], { ADMIN_TOKEN: 'not-the-servers-token-0123456789' });
    expect(wrong).toMatchObject({ code: 1, out: { error: { type: 'authentication_error', code: 'invalid_admin_token' } } });
    expect(wrong.out.error.message).toContain('(ADMIN_TOKEN here is not the one the server was started with)');

    const elsewhere = await json(['list-accounts'], { PORT: String(await freePort()) });
    expect(elsewhere.out.error).toMatchObject({ code: 'server_unreachable' });
    expect(elsewhere.out.error.message).toContain('could not be reached at https://127.0.0.1:');
    expect(elsewhere.out.error.message).toContain('ECONNREFUSED. Set HOST and PORT here as the server has them');

    const anyPort = await json(['list-accounts'], { PORT: '0' });
    expect(anyPort.out.error.message).toContain('but PORT is 0 (any free port), so its address is not known here: set PORT');
  });
});

describe('ladder-admin behind TRUST_PROXY', { timeout: 120_000 }, () => {
  it('reaches a plain-HTTP server (TLS left to a proxy) the same way, marking its requests as the proxy would', async () => {
    const port = await freePort();
    const server = await spawnServer({ PORT: String(port), ADMIN_TOKEN, LOG_LEVEL: 'info', TRUST_PROXY: 'true' });
    try {
      expect(await server.url()).toBe(`http://127.0.0.1:${port}`);
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(BIN, ['create-account', 'proxied-user', '--json'], {
          env: { PATH: process.env.PATH, DATA_DIR: server.dataDir, PORT: String(port), ADMIN_TOKEN, TRUST_PROXY: 'true', LOG_LEVEL: 'silent' },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
        child.stdin.end();
      });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ username: 'proxied-user' });
    } finally {
      await server.stop();
    }
  });
});
