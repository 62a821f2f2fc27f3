// `ladder-admin` for issue 23: key scope and expiry, account list by name, show, disable,
// enable, and the audit log, on an embedded database in a temporary DATA_DIR.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = path.resolve('dist/src/cli/admin.js');
const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-admin-accounts-'));
const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent', ENCRYPTION_KEY: '' };

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end('');
  });
}

async function json(...args: string[]) {
  const result = await run([...args, '--json']);
  return { code: result.code, out: JSON.parse(result.code === 0 ? result.stdout : result.stderr) };
}

describe('ladder-admin: accounts, scopes and the audit log', { timeout: 120_000 }, () => {
  it('creates keys with a scope and an expiry, shows them in the list, and refuses a bad scope or expiry', async () => {
    expect((await json('create-account', 'cli-owner')).code).toBe(0);
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const created = await json('create-key', 'cli-owner', '--scope', 'manage', '--expires', expires, '--name', 'ops');
    expect(created).toMatchObject({ code: 0, out: { scope: 'manage', expires_at: expires, name: 'ops', key: expect.stringMatching(/^ldr_live_/) } });
    expect((await json('create-key', 'cli-owner')).out).toMatchObject({ scope: 'use', expires_at: null });
    const listed = await json('list-keys', 'cli-owner');
    expect(listed.out.data.map((k: { scope: string; expires_at: string | null }) => [k.scope, k.expires_at])).toEqual([['manage', expires], ['use', null]]);
    expect(JSON.stringify(listed.out)).not.toContain(created.out.key);
    const table = await run(['list-keys', 'cli-owner']);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID +KEY_PREFIX +NAME +SCOPE +ACCESS +EXPIRES_AT +CREATED_AT +REVOKED_AT$/);
    expect(await json('create-key', 'cli-owner', '--scope', 'root')).toMatchObject({ code: 2, out: { error: { message: '--scope must be use or manage' } } });
    expect(await json('create-key', 'cli-owner', '--expires', '2001-01-01T00:00:00Z')).toMatchObject({ code: 1, out: { error: { code: 'invalid_expires_at' } } });
  });

  it('lists accounts filtered by name, shows one, disables and enables it', async () => {
    expect((await json('create-account', 'cli-other')).code).toBe(0);
    const listed = await json('list-accounts', '--name', 'owner');
    expect(listed.out.data).toEqual([{ id: expect.any(String), username: 'cli-owner', created_at: expect.any(String), disabled: false, disabled_at: null, key_count: 2 }]);
    const shown = await json('show-account', 'cli-owner');
    expect(shown.out).toMatchObject({ username: 'cli-owner', key_count: 2, disabled: false, this_month: { requests: 0, cost_usd: 0 } });
    expect(await json('disable-account', 'cli-owner')).toEqual({ code: 0, out: { username: 'cli-owner', disabled: true, changed: true, runs_cancelled: 0 } });
    expect((await json('show-account', 'cli-owner')).out).toMatchObject({ disabled: true, disabled_at: expect.any(String) });
    expect(await json('disable-account', 'cli-owner')).toMatchObject({ out: { changed: false } });
    expect(await json('enable-account', 'cli-owner')).toEqual({ code: 0, out: { username: 'cli-owner', disabled: false, changed: true, runs_cancelled: 0 } });
    expect(await json('disable-account', 'nobody-at-all')).toMatchObject({ code: 1, out: { error: { code: 'account_not_found' } } });
  });

  it('audit: every change by the command line, newest first, kept after the account is deleted', async () => {
    expect((await json('delete-account', 'cli-other', '--yes')).code).toBe(0);
    const all = await json('audit', '--limit', '100');
    expect(all.out.data.map((e: { action: string; account: string; actor: string }) => [e.action, e.account, e.actor])).toEqual([
      ['account.deleted', 'cli-other', 'cli'],
      ['account.enabled', 'cli-owner', 'cli'],
      ['account.disabled', 'cli-owner', 'cli'],
      ['account.created', 'cli-other', 'cli'],
      ['api_key.created', 'cli-owner', 'cli'],
      ['api_key.created', 'cli-owner', 'cli'],
      ['account.created', 'cli-owner', 'cli'],
    ]);
    expect((await json('audit', '--account', 'cli-other')).out.data).toHaveLength(2);
    expect((await json('audit', '--action', 'account.disabled')).out.data).toHaveLength(1);
    expect(await json('audit', '--action', 'nope')).toMatchObject({ code: 2 });
    const table = await run(['audit', '--limit', '1']);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID +CREATED_AT +ACTOR +ACCOUNT +ACTION +TARGET_ID +DETAILS$/);
  });
});
