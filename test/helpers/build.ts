// build(): the application registered on a fresh database, for `app.inject` tests.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import app from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Database } from '../../src/db/client.js';
import type { Telemetry } from '../../src/telemetry/telemetry.js';
import { fastifyOptions } from '../../src/server-options.js';
import { openTestDatabase } from './database.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

/** Settings every test starts from; a test overrides what it is about. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'ladder-test-')),
    ADMIN_TOKEN,
    ENCRYPTION_KEY,
    LOG_LEVEL: 'silent',
    ALLOW_PRIVATE_ENDPOINTS: 'true',
    ...env,
  });
}

/** Collects log lines (pino JSON) so tests can search them. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void) {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  database: Database;
  close(): Promise<void>;
}

export async function build(
  env: Record<string, string> = {},
  options: {
    logs?: LogCapture;
    /** Shared with another app; the caller closes it. */ database?: Database;
    /** Time source of quota windows and ledger rows. */ clock?: () => number;
    /** Tracing, started by the test (an in-memory exporter). */ telemetry?: Telemetry;
  } = {},
): Promise<TestApp> {
  const config = testConfig({ ...(options.logs ? { LOG_LEVEL: 'info' } : {}), ...env });
  const database = options.database ?? (await openTestDatabase());
  const fastify = Fastify(fastifyOptions(config, options.logs));
  await fastify.register(app, { config, database, clock: options.clock, ...(options.telemetry ? { telemetry: options.telemetry } : {}) });
  await fastify.ready();
  return {
    app: fastify,
    config,
    database,
    close: async () => {
      await fastify.close();
      if (!options.database) await database.close();
    },
  };
}

export const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };

export async function createAccount(app: FastifyInstance, username = `user-${randomBytes(4).toString('hex')}`) {
  const res = await app.inject({ method: 'POST', url: '/v1/admin/accounts', headers: adminHeaders, payload: { username } });
  if (res.statusCode !== 201) throw new Error(`createAccount failed: ${res.statusCode} ${res.body}`);
  return res.json<{ id: string; username: string }>();
}

export async function createKey(
  app: FastifyInstance,
  username: string,
  access?: { mode: 'unrestricted' | 'whitelist' | 'blacklist'; ladders: string[] },
  more: { scope?: 'use' | 'manage'; expires_at?: string; name?: string } = {},
) {
  const res = await app.inject({
    method: 'POST',
    url: `/v1/admin/accounts/${username}/api-keys`,
    headers: adminHeaders,
    payload: { ...(access ? { access } : {}), ...more },
  });
  if (res.statusCode !== 201) throw new Error(`createKey failed: ${res.statusCode} ${res.body}`);
  return res.json<{ id: string; key: string; key_prefix: string }>();
}

/** An account with one unrestricted key (`use` unless told), and the headers to call as it. */
export async function createUser(app: FastifyInstance, username?: string, scope: 'use' | 'manage' = 'use') {
  const account = await createAccount(app, username);
  const key = await createKey(app, account.username, undefined, { scope });
  return { ...account, key: key.key, keyId: key.id, headers: { authorization: `Bearer ${key.key}` } };
}
