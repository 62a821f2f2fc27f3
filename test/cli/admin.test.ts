// `ladder-admin`, compiled and run as users run it, on an embedded database in a temporary
// DATA_DIR: every command once, its help, its errors and exit codes, and --json output.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { createInstanceService } from '../../src/services/instances.js';
import { minimalLadder, recursiveRefinement } from '../ladders/examples.js';

const BIN = path.resolve('dist/src/cli/admin.js');
const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-admin-'));
const baseEnv = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent', ENCRYPTION_KEY: '' };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the bin itself (shebang and file mode included), feeding `input` to its stdin. */
function run(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { env: { ...baseEnv, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** With --json: the parsed answer from stdout (success) or stderr (failure). */
async function json(...args: string[]) {
  const result = await run([...args, '--json']);
  try {
    return { code: result.code, out: JSON.parse(result.code === 0 ? result.stdout : result.stderr) };
  } catch {
    throw new Error(`ladder-admin ${args.join(' ')} --json answered ${result.code}: ${result.stdout}${result.stderr}`);
  }
}

describe('ladder-admin without a database', { timeout: 60_000 }, () => {
  it('answers --version with the package version', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('lists every command in help, and shows one command\'s usage with help <command> or --help', async () => {
    const help = await run(['help']);
    expect(help.code).toBe(0);
    for (const name of ['create-account', 'list-accounts', 'delete-account', 'create-key', 'list-keys', 'revoke-key', 'push-ladder', 'list-ladders',
      'show-ladder', 'delete-ladder', 'list-instances', 'show-instance', 'list-connections', 'set-connection', 'delete-connection', 'migrate', 'reencrypt']) {
      expect(help.stdout).toContain(`  ${name} `);
    }
    const topic = await run(['help', 'set-connection']);
    expect(topic.code).toBe(0);
    expect(topic.stdout).toMatch(/^Usage: ladder-admin set-connection <username> <provider> \[--key-env VAR\]/);
    expect((await run(['list-keys', '--help'])).stdout).toMatch(/^Usage: ladder-admin list-keys <username> \[--json\]\n/);
  });

  it('says "unknown command" and exits 2 on an unknown command, an unknown option or a missing argument', async () => {
    const unknown = await run(['frobnicate']);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toMatch(/^unknown command: frobnicate\n/);
    expect(await run(['help', 'frobnicate'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^unknown command: frobnicate/) });
    const option = await run(['list-keys', 'alice', '--bogus']);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("Unknown option '--bogus'");
    expect(await json('list-keys')).toEqual({ code: 2, out: { error: { message: 'missing username', type: 'usage_error', code: 'usage' } } });
  });
});

// Every command opens the embedded database afresh, which takes a few seconds on a busy machine.
describe('ladder-admin on an embedded database', { timeout: 180_000 }, () => {
  const file = (name: string, text: string) => {
    const full = path.join(dataDir, name);
    writeFileSync(full, text);
    return full;
  };
  let account: { id: string; username: string };

  beforeAll(async () => {
    expect((await json('migrate')).out).toEqual({ migrated: true });
    const created = await json('create-account', 'cli-admin');
    expect(created).toMatchObject({ code: 0, out: { username: 'cli-admin', id: expect.any(String) } });
    account = created.out;
  }, 120_000);

  it('accounts: create (409 when taken), list as JSON and as a table, delete only with --yes', async () => {
    expect(await json('create-account', 'cli-admin')).toMatchObject({ code: 1, out: { error: { code: 'username_taken' } } });
    expect((await json('create-account', 'cli-doomed')).code).toBe(0);
    const listed = await json('list-accounts');
    expect(listed.out.data.map((a: { username: string }) => a.username)).toEqual(['cli-admin', 'cli-doomed']);
    const table = await run(['list-accounts']);
    expect(table.stdout.split('\n')[0]).toMatch(/^USERNAME +ID +CREATED_AT +DISABLED +KEY_COUNT$/);
    expect(table.stdout).toMatch(/\ncli-doomed +[0-9a-f-]{36} +\d{4}-/);

    expect(await json('delete-account', 'cli-doomed')).toMatchObject({ code: 2, out: { error: { message: expect.stringContaining('add --yes to confirm') } } });
    expect(await json('delete-account', 'cli-doomed', '--yes')).toEqual({ code: 0, out: { deleted: 'cli-doomed' } });
    expect(await json('delete-account', 'cli-doomed', '--yes')).toMatchObject({ code: 1, out: { error: { code: 'account_not_found' } } });
  });

  it('API keys: create prints the key once, list never shows it, revoke marks it revoked', async () => {
    const created = await json('create-key', 'cli-admin', '--name', 'laptop', '--mode', 'whitelist', '--ladder', 'cli-admin/*');
    expect(created.out).toMatchObject({ key: expect.stringMatching(/^ldr_live_/), name: 'laptop', access: { mode: 'whitelist', ladders: ['cli-admin/*'] } });
    const listed = await json('list-keys', 'cli-admin');
    expect(listed.out.data).toEqual([expect.objectContaining({ id: created.out.id, key_prefix: created.out.key_prefix, revoked_at: null })]);
    expect(JSON.stringify(listed.out)).not.toContain(created.out.key);
    expect(await json('revoke-key', created.out.id)).toEqual({ code: 0, out: { ok: true } });
    expect((await json('list-keys', 'cli-admin')).out.data[0].revoked_at).toEqual(expect.any(String));
    expect(await json('revoke-key', 'not-a-key-id')).toMatchObject({ code: 1, out: { error: { code: 'api_key_not_found' } } });
    expect(await json('create-key', 'cli-admin', '--mode', 'sometimes')).toMatchObject({ code: 2, out: { error: { message: '--mode must be unrestricted, whitelist or blacklist' } } });
  });

  it('ladders: push several files, list, show a version, delete', async () => {
    const pushed = await json('push-ladder', 'cli-admin', file('draft.yaml', stringify(minimalLadder)), file('refine.json', JSON.stringify(recursiveRefinement)));
    expect(pushed.out.data).toEqual([
      expect.objectContaining({ slug: 'draft', version: 1, name: minimalLadder.name }),
      expect.objectContaining({ slug: 'refine', version: 1, name: recursiveRefinement.name }),
    ]);
    await json('push-ladder', 'cli-admin', file('draft.yaml', stringify({ ...minimalLadder, name: 'Second draft' })));
    expect((await json('list-ladders', 'cli-admin')).out.data.map((l: { slug: string; version: number }) => [l.slug, l.version])).toEqual([['draft', 2], ['refine', 1]]);
    const first = await json('show-ladder', 'cli-admin/draft', '--version', '1');
    expect(first.out).toMatchObject({ slug: 'draft', version: 1, name: minimalLadder.name, config: { exit: 'refine' } });
    expect(await json('show-ladder', 'cli-admin')).toMatchObject({ code: 2, out: { error: { message: 'a ladder is named author/slug, got "cli-admin"' } } });
    expect(await json('delete-ladder', 'cli-admin/refine')).toEqual({ code: 0, out: { deleted: 'cli-admin/refine' } });
    expect(await json('show-ladder', 'cli-admin/refine')).toMatchObject({ code: 1, out: { error: { code: 'ladder_not_found' } } });
    expect(await json('push-ladder', 'cli-admin', 'a.yaml', 'b.yaml', '--slug', 'x')).toMatchObject({ code: 2, out: { error: { message: '--slug names one ladder: give one file with it' } } });
  });

  it('provider connections: set with the key from stdin or a named variable, list without keys, delete', async () => {
    const fromStdin = await run(['set-connection', 'cli-admin', 'openai', '--label', 'work', '--json'], { input: 'sk-from-stdin-0123456789\n' });
    expect(fromStdin.code).toBe(0);
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ provider: 'openai', label: 'work', key_prefix: 'sk-fro', created: true });
    const fromEnv = await run(['set-connection', 'cli-admin', 'anthropic', '--key-env', 'MY_KEY', '--priority', '5', '--json'], { env: { MY_KEY: 'sk-ant-from-env-0123456789' } });
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ provider: 'anthropic', priority: 5, key_prefix: 'sk-ant' });
    const listed = await json('list-connections', 'cli-admin');
    expect(listed.out.data.map((c: { provider: string }) => c.provider)).toEqual(['openai', 'anthropic']);
    expect(JSON.stringify(listed.out)).not.toMatch(/from-stdin-0123|from-env-0123/);
    expect(await json('delete-connection', 'cli-admin', 'openai')).toEqual({ code: 0, out: { deleted: 'openai' } });
    expect(await json('delete-connection', 'cli-admin', 'openai')).toMatchObject({ code: 1, out: { error: { code: 'provider_connection_not_found' } } });
    const empty = await run(['set-connection', 'cli-admin', 'groq', '--json']);
    expect(empty.code).toBe(2);
    expect(JSON.parse(empty.stderr).error.message).toMatch(/^no key on stdin/);
    expect(await json('reencrypt')).toEqual({ code: 0, out: { reencrypted: 0, total: 1 } });
  });

  it('set-connection refuses the endpoints the API refuses, by the same rule and settings (ALLOW_PRIVATE_ENDPOINTS)', async () => {
    const strict = { ALLOW_PRIVATE_ENDPOINTS: 'false' };
    for (const endpoint of ['http://169.254.169.254', 'https://10.0.0.5/v1', 'https://169.254.169.254/latest']) {
      const refused = await run(['set-connection', 'cli-admin', 'custom', '--endpoint', endpoint, '--json'], { input: 'local\n', env: strict });
      expect(refused.code).toBe(1);
      const { error } = JSON.parse(refused.stderr);
      expect(error).toMatchObject({ type: 'invalid_request_error', code: 'endpoint_not_allowed', param: 'endpoint' });
      expect(error.message).toContain('refused because ALLOW_PRIVATE_ENDPOINTS is off');
    }
    expect((await json('list-connections', 'cli-admin')).out.data.map((c: { provider: string }) => c.provider)).not.toContain('custom');
    const allowed = await run(['set-connection', 'cli-admin', 'custom', '--endpoint', 'http://10.0.0.5:11434/v1', '--json'], {
      input: 'local\n', env: { ALLOW_PRIVATE_ENDPOINTS: 'true' },
    });
    expect(allowed.code).toBe(0);
    expect(JSON.parse(allowed.stdout)).toMatchObject({ provider: 'custom', endpoint: 'http://10.0.0.5:11434/v1', created: true });
    expect(await json('delete-connection', 'cli-admin', 'custom')).toEqual({ code: 0, out: { deleted: 'custom' } });
  });

  it('instances: list with filters and show one, with the status as stored', async () => {
    const pushed = await json('push-ladder', 'cli-admin', file('runs.yaml', stringify(minimalLadder)));
    const database = await openDatabase({ url: null, dataDir });
    let id: string;
    try {
      const row = await createInstanceService(database.db).create({
        ladderId: pushed.out.id, ladderVersion: 1, author: 'cli-admin', slug: 'runs', accountId: account.id, apiKeyId: null,
        mode: 'sync', model: 'gpt-4o-mini', input: 'Hello', knobs: {},
      });
      id = row.id;
    } finally {
      await database.close();
    }
    const listed = await json('list-instances', '--account', 'cli-admin');
    expect(listed.out.data).toEqual([
      expect.objectContaining({ id, status: 'running', ladder: 'cli-admin/runs@v1', model: 'gpt-4o-mini', finished_at: null, spend_usd: 0 }),
    ]);
    expect((await json('list-instances', '--status', 'failed')).out.data).toEqual([]);
    expect((await json('list-instances', '--ladder', 'cli-admin/runs', '--limit', '1')).out.data).toHaveLength(1);
    const shown = await json('show-instance', id);
    expect(shown.out).toMatchObject({ id, status: 'running', mode: 'sync', started_at: expect.any(String), answer: null, error: null });
    const table = await run(['show-instance', id]);
    expect(table.stdout).toContain(`status: running\nladder: cli-admin/runs@v1\nmodel: gpt-4o-mini\n`);
    expect(await json('show-instance', 'nope')).toMatchObject({ code: 1, out: { error: { code: 'instance_not_found' } } });
  });
});
