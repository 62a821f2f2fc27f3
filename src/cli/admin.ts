#!/usr/bin/env node
// Operator command line: works directly on the database, so a fresh install can be
// bootstrapped before the server ever runs. `ladder-admin help` lists the commands; the
// commands themselves are in commands/, one module per resource.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { loadEnvFile } from '../env-file.js';
import { ApiError } from '../errors.js';
import { UsageError, type Command, type Context, type Flags, type Listing } from './command.js';
import { commands } from './commands/index.js';
import { render } from './output.js';
import type { AdminApi } from './remote.js';

const GLOBAL_OPTIONS = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

function usage(): string {
  const lines = commands.map((c) => `  ${`${c.name} ${c.args.split(' [')[0]}`.padEnd(36)} ${c.summary}`);
  return [
    'Usage: ladder-admin <command> [arguments] [--json]',
    '',
    'Commands:',
    ...lines,
    '',
    '`ladder-admin help <command>` (or `<command> --help`) shows a command\'s options.',
    '--json prints machine-readable output, listings as {"data": [...]}; --version prints the version.',
    'Settings come from the same environment variables as the server (DATABASE_URL, DATA_DIR, ...),',
    'and from ./.env for those the environment does not set. While a running server holds the embedded',
    'database, commands go through its admin API (HOST, PORT and ADMIN_TOKEN as the server has them).',
  ].join('\n');
}

function commandHelp(command: Command): string {
  return [`Usage: ladder-admin ${command.name} ${command.args} [--json]`.replace(/ +/g, ' '), '', `${command.summary}.`, ...(command.details ? [command.details] : [])].join('\n');
}

function version(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v') return print(version());
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const topic = name === 'help' ? rest.find((a) => !a.startsWith('-')) : undefined;
    if (topic === undefined) {
      print(usage());
      return name === undefined ? 2 : 0;
    }
    const command = commands.find((c) => c.name === topic);
    return command ? print(commandHelp(command)) : unknownCommand(topic);
  }
  const command = commands.find((c) => c.name === name);
  if (!command) return unknownCommand(name);

  let parsed: { positionals: string[]; values: Flags };
  try {
    parsed = parseArgs({ args: rest, allowPositionals: true, strict: true, options: { ...GLOBAL_OPTIONS, ...command.options } });
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\nRun \`ladder-admin help ${command.name}\` for its usage.\n`);
    return 2;
  }
  const { positionals, values } = parsed;
  if (values.help) return print(commandHelp(command));
  const json = values.json === true;

  loadEnvFile();
  const { ConfigError, loadConfig } = await import('../config.js');
  let database: Database | null = null;
  try {
    const config = loadConfig();
    const context: Context = {
      server: await serverHolding(config),
      config,
      database: async () => {
        const { openDatabase } = await import('../db/client.js');
        database ??= await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
        return database;
      },
      readSecret,
    };
    const result = await command.run(context, positionals, values);
    print(json ? JSON.stringify(isListing(result) ? { data: result.data } : result) : render(result));
    return 0;
  } catch (error) {
    const { ServerUnreachableError } = await import('./remote.js');
    if (!(error instanceof ApiError || error instanceof UsageError || error instanceof ConfigError || error instanceof ServerUnreachableError)) throw error;
    const body = error instanceof ApiError ? error.toBody() : { error: { message: error.message, ...kindOf(error) } };
    process.stderr.write(json ? `${JSON.stringify(body)}\n` : `error: ${error.message}\n`);
    return error instanceof UsageError ? 2 : 1;
  } finally {
    await (database as Database | null)?.close();
  }
}

function kindOf(error: Error): { type: string; code: string } {
  if (error instanceof UsageError) return { type: 'usage_error', code: 'usage' };
  if (error.name === 'ServerUnreachableError') return { type: 'connection_error', code: 'server_unreachable' };
  return { type: 'usage_error', code: 'invalid_configuration' };
}

/**
 * The embedded database serves one process: while a server holds it, commands go through that
 * server's admin API (connected on first use, so argument errors come first either way).
 */
async function serverHolding(config: Config): Promise<Context['server']> {
  if (config.databaseUrl !== null) return null;
  const { embeddedLockHolder } = await import('../db/embedded-lock.js');
  const holder = embeddedLockHolder(config.dataDir);
  if (holder === null) return null;
  const { adminApiOf } = await import('./remote.js');
  let api: AdminApi | null = null;
  return () => (api ??= adminApiOf(config, holder));
}

function print(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}

function unknownCommand(name: string): number {
  process.stderr.write(`unknown command: ${name}\nRun \`ladder-admin help\` for the list of commands.\n`);
  return 2;
}

function isListing(result: object): result is Listing {
  return 'data' in result && Array.isArray(result.data) && 'columns' in result;
}

/** From the named variable; else stdin: typed without echo on a terminal, or piped. */
async function readSecret(prompt: string, envVariable: string | undefined): Promise<string> {
  if (envVariable !== undefined) {
    const value = process.env[envVariable];
    if (!value) throw new UsageError(`environment variable ${envVariable} is not set`);
    return value;
  }
  if (!process.stdin.isTTY) {
    let text = '';
    for await (const chunk of process.stdin) text += String(chunk);
    const value = text.replace(/\r?\n$/, '');
    if (!value) throw new UsageError('no key on stdin (pipe it in, or name a variable with --key-env)');
    return value;
  }
  process.stderr.write(prompt);
  const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
  const reader = createInterface({ input: process.stdin, output: muted, terminal: true });
  const line = await new Promise<string>((resolve) => reader.once('line', resolve));
  reader.close();
  process.stderr.write('\n');
  return line;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
