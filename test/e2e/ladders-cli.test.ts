// `ladder-admin push-ladder`: a JSON or YAML file validated and saved as a new version,
// straight against the database (here an embedded one in a temporary DATA_DIR).
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { minimalLadder } from '../ladders/examples.js';

const run = promisify(execFile);

describe('push-ladder', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-cli-'));
  const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent' };
  const cli = async (...args: string[]) => {
    try {
      // The compiled CLI, as users run it: `npm test` builds before testing.
      const { stdout } = await run(process.execPath, [path.resolve('dist/src/cli/admin.js'), ...args, '--json'], { env });
      return { code: 0, out: JSON.parse(stdout) };
    } catch (error) {
      const failed = error as { code: number; stderr: string };
      return { code: failed.code, out: JSON.parse(failed.stderr) };
    }
  };
  const file = (name: string, text: string) => {
    const full = path.join(dataDir, name);
    writeFileSync(full, text);
    return full;
  };

  beforeAll(async () => {
    expect((await cli('create-account', 'cli-author')).code).toBe(0);
  }, 120_000);

  it('saves a YAML file under a slug made from its name, then a new version of it', async () => {
    const yamlFile = file('My Ladder.v2.yaml', stringify(minimalLadder));
    const first = await cli('push-ladder', 'cli-author', yamlFile, '--visibility', 'public', '--description', 'From the CLI');
    expect(first).toMatchObject({
      code: 0,
      out: { author: 'cli-author', slug: 'my-ladder-v2', version: 1, name: 'Draft and refine', description: 'From the CLI', usage_visibility: 'public', config_visibility: 'private' },
    });
    expect(first.out).not.toHaveProperty('config');
    const jsonFile = file('other.json', JSON.stringify({ ...minimalLadder, name: 'Renamed' }));
    const second = await cli('push-ladder', 'cli-author', jsonFile, '--slug', 'my-ladder-v2', '--config-visibility', 'public');
    expect(second.out).toMatchObject({ id: first.out.id, version: 2, name: 'Renamed', usage_visibility: 'public', config_visibility: 'public' });
  }, 60_000);

  it('reports an invalid config with every error, and a syntax error with its line and column', async () => {
    const invalid = await cli('push-ladder', 'cli-author', file('bad.json', JSON.stringify({ ...minimalLadder, exit: 'nowhere' })));
    expect(invalid).toEqual({
      code: 1,
      out: { error: { message: 'The ladder config is invalid: exit: no step has id "nowhere"', type: 'invalid_request_error', code: 'invalid_ladder_config', param: 'config' } },
    });
    const broken = await cli('push-ladder', 'cli-author', file('broken.json', '{\n  "name": \n}'));
    expect(broken.code).toBe(1);
    expect(broken.out.error).toMatchObject({ code: 'invalid_ladder_file' });
    expect(broken.out.error.message).toMatch(/broken\.json:\d+:\d+: invalid JSON: /);
    const flag = await cli('push-ladder', 'cli-author', file('ok.json', JSON.stringify(minimalLadder)), '--visibility', 'secret');
    expect(flag).toMatchObject({ code: 2, out: { error: { message: '--visibility must be private, unlisted or public' } } });
  }, 60_000);
});
