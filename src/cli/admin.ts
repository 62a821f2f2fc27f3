#!/usr/bin/env node
// Operator command line: works directly on the database, so a fresh install can be
// bootstrapped before the server ever runs. `npm run admin -- help` lists the commands.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import { loadSecretBox } from '../crypto/data-dir-secrets.js';
import { openDatabase, type Database } from '../db/client.js';
import { ApiError, invalidRequest } from '../errors.js';
import { parseConfigText } from '../ladders/parse-text.js';
import { createAccount, createApiKey, findAccount, listApiKeys, revokeApiKey } from '../services/accounts.js';
import type { LadderAccess } from '../services/ladder-access.js';
import { createConnectionService } from '../services/provider-connections.js';
import { createLadderService } from '../services/ladders.js';
import { limitsCommand, LIMIT_FLAGS } from './limits.js';

const USAGE = `Usage: ladder-admin <command> [arguments] [--json]

Commands:
  migrate                              apply pending database migrations
  create-account <username>            create an account
  create-key <username> [--name N] [--mode unrestricted|whitelist|blacklist] [--ladder author/slug ...]
                                       create an API key (the key is printed once)
  list-keys <username>                 list an account's API keys (never the keys)
  revoke-key <key id>                  revoke an API key
  push-ladder <username> <file> [--slug S] [--visibility private|unlisted|public] [--config-visibility ...] [--description D]
                                       validate a JSON or YAML ladder config and save it as a new version
                                       (slug default: the file name without extension, lowercased)
  limits <username> [--key ID] [--rpm N] [--tpm N] [--usd-day X] [--usd-month X]
                                       show an account's limits and its keys'; with flags, change the
                                       account's (or, with --key, that key's); "none" removes a limit
  reencrypt                            reseal every stored provider key under the current ENCRYPTION_KEY
                                       (keep the old key in ENCRYPTION_KEY_PREVIOUS until this has run)

Settings come from the same environment variables as the server (DATABASE_URL, DATA_DIR, ...).`;

type Command = (db: Database, args: string[], flags: Flags, config: Config) => Promise<unknown>;
interface Flags {
  name?: string;
  mode?: string;
  ladder?: string[];
  slug?: string;
  visibility?: string;
  'config-visibility'?: string;
  description?: string;
  key?: string;
  rpm?: string;
  tpm?: string;
  'usd-day'?: string;
  'usd-month'?: string;
}

const commands: Record<string, Command> = {
  migrate: async () => ({ migrated: true }),
  'create-account': (db, [username]) => createAccount(db.db, required(username, 'username')),
  'create-key': (db, [username], flags) => {
    const mode = (flags.mode ?? 'unrestricted') as LadderAccess['mode'];
    if (!['unrestricted', 'whitelist', 'blacklist'].includes(mode)) throw new UsageError(`--mode must be unrestricted, whitelist or blacklist`);
    return createApiKey(db.db, required(username, 'username'), { name: flags.name ?? null, access: { mode, ladders: flags.ladder ?? [] } });
  },
  'list-keys': async (db, [username]) => ({ data: await listApiKeys(db.db, required(username, 'username')) }),
  'revoke-key': async (db, [id]) => {
    await revokeApiKey(db.db, required(id, 'key id'));
    return { ok: true };
  },
  'push-ladder': async (db, [username, file], flags) => {
    const account = await findAccount(db.db, required(username, 'username'));
    const fileName = required(file, 'file');
    let config: unknown;
    try {
      config = parseConfigText(await readFile(fileName, 'utf8'), fileName);
    } catch (error) {
      throw invalidRequest('invalid_ladder_file', error instanceof Error ? error.message : String(error));
    }
    const principal = { accountId: account.id, username: account.username, apiKeyId: '', access: { mode: 'unrestricted' as const, ladders: [] } };
    const { metadata } = await createLadderService(db.db).save(principal, account.username, flags.slug ?? slugFromFile(fileName), {
      config,
      ...(flags.description !== undefined ? { description: flags.description } : {}),
      ...(flags.visibility ? { usageVisibility: visibility(flags.visibility, '--visibility') } : {}),
      ...(flags['config-visibility'] ? { configVisibility: visibility(flags['config-visibility'], '--config-visibility') } : {}),
    });
    const { config: _saved, ...summary } = metadata;
    return summary;
  },
  limits: async (db, [username], flags) => limitsCommand(db.db, required(username, 'username'), flags),
  reencrypt: async (db, _args, _flags, config) => {
    const service = createConnectionService(db.db, await loadSecretBox(config), { allowPrivateEndpoints: true, cacheTtlMs: 0 });
    return service.reencryptAll();
  },
};

class UsageError extends Error {}

/** `My Ladder.v2.yaml` -> `my-ladder-v2`: lowercased, other characters to '-'. */
function slugFromFile(fileName: string): string {
  const base = path.basename(fileName).replace(/\.(ya?ml|json)$/i, '');
  return base.toLowerCase().replace(/[^a-z0-9_-]/g, '-');
}

function visibility(value: string, flag: string): 'private' | 'unlisted' | 'public' {
  if (value === 'private' || value === 'unlisted' || value === 'public') return value;
  throw new UsageError(`${flag} must be private, unlisted or public`);
}

function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      name: { type: 'string' },
      mode: { type: 'string' },
      ladder: { type: 'string', multiple: true },
      slug: { type: 'string' },
      visibility: { type: 'string' },
      'config-visibility': { type: 'string' },
      description: { type: 'string' },
      ...LIMIT_FLAGS,
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [name, ...args] = positionals;
  const command = name ? commands[name] : undefined;
  if (values.help || name === 'help' || !command) {
    process.stdout.write(`${USAGE}\n`);
    return command || values.help || name === 'help' ? 0 : 2;
  }

  const config = loadConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
  try {
    const result = await command(database, args, values, config);
    process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${humanReadable(result)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof ApiError || error instanceof UsageError) {
      const body = error instanceof ApiError ? error.toBody() : { error: { message: error.message, type: 'usage_error', code: 'usage' } };
      process.stderr.write(values.json ? `${JSON.stringify(body)}\n` : `error: ${error.message}\n`);
      return error instanceof UsageError ? 2 : 1;
    }
    throw error;
  } finally {
    await database.close();
  }
}

function humanReadable(result: unknown): string {
  if (result && typeof result === 'object' && 'data' in result && Array.isArray(result.data)) {
    return result.data.map((row) => Object.entries(row as object).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join('  ')).join('\n') || '(none)';
  }
  return Object.entries(result as object).map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`).join('\n');
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
