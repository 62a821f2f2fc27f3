// The real process surface: TLS listener, plain-HTTP refusal, proxy mode, restart
// persistence of the embedded database and of the generated secrets, graceful shutdown.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import nodeModule from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/server.js';
import { adminHeaders, ADMIN_TOKEN, testConfig } from './helpers/build.js';
import { getJson, SERVER_ENTRY, spawnServer } from './helpers/spawned-server.js';

function httpsRequest(url: string, options: https.RequestOptions & { body?: string }): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Sends raw bytes and reads until the server closes the connection. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (data += c));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(5000, () => reject(new Error(`no answer; got so far: ${JSON.stringify(data)}`)));
  });
}

const portOf = (server: RunningServer) => Number(new URL(server.url).port);

describe('HTTPS server on the embedded database', () => {
  const config = testConfig({ PORT: '0', ENCRYPTION_KEY: '' });
  let server: RunningServer;
  let ca: string;
  beforeAll(async () => {
    server = await startServer(config);
    ca = readFileSync(path.join(config.dataDir, 'tls', 'localhost.crt'), 'utf8');
  }, 60_000);
  afterAll(() => server?.close());

  it('serves HTTPS with a generated certificate valid for 127.0.0.1', async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await httpsRequest(`${server.url}/healthz`, { ca });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ status: 'ok' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers a plain-HTTP request at once with 400 https_required in the envelope', async () => {
    const answer = await rawExchange(portOf(server), 'GET /v1/providers HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(head).toMatch(/content-type: application\/json/i);
    expect(head).toMatch(/x-request-id: [0-9a-f-]{36}/i);
    expect(JSON.parse(body!)).toEqual({
      error: { message: 'This service only accepts HTTPS. Resend the request to the https:// URL.', type: 'invalid_request_error', code: 'https_required', param: null },
    });
  });

  it('answers bytes that are neither TLS nor HTTP with 400 malformed_request', async () => {
    const answer = await rawExchange(portOf(server), 'HELLO THERE\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!).error).toEqual({
      message: 'The request is not well-formed HTTP/1.1.', type: 'invalid_request_error', code: 'malformed_request', param: null,
    });
  });

  it('survives clients that reset the connection at any point', async () => {
    const resetAfter = (bytes: Buffer | string | null) =>
      new Promise<void>((resolve) => {
        const socket = net.connect(portOf(server), '127.0.0.1', () => {
          if (bytes !== null) socket.write(bytes);
          setTimeout(() => socket.resetAndDestroy(), 20);
        });
        socket.on('error', () => {});
        socket.on('close', () => resolve());
      });
    await resetAfter(null);
    await resetAfter('GET /healthz HT');
    await resetAfter(Buffer.from([0x16, 0x03, 0x01, 0x00]));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const res = await httpsRequest(`${server.url}/healthz`, { ca });
    expect(res.status).toBe(200);
  });

  it('never processes a plain-HTTP request, even a well-formed admin call', async () => {
    const payload = JSON.stringify({ username: 'plainhttp' });
    const answer = await rawExchange(
      portOf(server),
      `POST /v1/admin/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n${payload}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    const again = await httpsRequest(`${server.url}/v1/admin/accounts`, {
      ca, method: 'POST', headers: { ...adminHeaders, 'content-type': 'application/json' }, body: payload,
    });
    expect(again.status).toBe(201);
  });

  it('keeps the data, the certificate and the encryption key across a restart', async () => {
    const created = await httpsRequest(`${server.url}/v1/admin/accounts`, {
      ca, method: 'POST', headers: { ...adminHeaders, 'content-type': 'application/json' }, body: JSON.stringify({ username: 'persisted' }),
    });
    expect(created.status).toBe(201);
    const keyFile = path.join(config.dataDir, 'encryption.key');
    const key = readFileSync(keyFile, 'utf8');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(Buffer.from(key, 'base64')).toHaveLength(32);

    await server.close();
    server = await startServer(config);
    const again = await httpsRequest(`${server.url}/v1/admin/accounts`, {
      ca, method: 'POST', headers: { ...adminHeaders, 'content-type': 'application/json' }, body: JSON.stringify({ username: 'persisted' }),
    });
    expect(again.status).toBe(409);
    expect(readFileSync(keyFile, 'utf8')).toBe(key);
    expect(readFileSync(path.join(config.dataDir, 'tls', 'localhost.crt'), 'utf8')).toBe(ca);
  }, 60_000);
});

describe('behind a TLS-terminating proxy (TRUST_PROXY)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(testConfig({ PORT: '0', TRUST_PROXY: 'true' }));
  }, 60_000);
  afterAll(() => server?.close());

  it('serves plain HTTP but accepts only requests the proxy marks https', async () => {
    expect(server.url).toMatch(/^http:\/\//);
    const unmarked = await fetch(`${server.url}/v1/providers/catalog`);
    expect(unmarked.status).toBe(400);
    expect(((await unmarked.json()) as { error: { code: string } }).error.code).toBe('https_required');
    const marked = await fetch(`${server.url}/v1/providers/catalog`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(marked.status).toBe(200);
  });

  it('answers a malformed request in the envelope', async () => {
    const answer = await rawExchange(Number(new URL(server.url).port), 'GET / HTTP/1.1\r\nBad Header Line\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!).error.code).toBe('malformed_request');
  });

  it('lets health probes through unmarked', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});

describe('the process', () => {
  it('exits 0 on SIGTERM after closing cleanly', async () => {
    expect(statSync(SERVER_ENTRY, { throwIfNoEntry: false }), 'run `npm run build` first (npm test does)').toBeDefined();
    const dataDir = testConfig().dataDir;
    const child = spawn(process.execPath, [SERVER_ENTRY], {
      env: { ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', DATABASE_URL: process.env.TEST_DATABASE_URL ?? '', ADMIN_TOKEN: '', ENCRYPTION_KEY: '', ENCRYPTION_KEY_FILE: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 60_000);
      child.stdout.on('data', () => {
        if (output.includes('admin API: ')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    // After Fastify's line with the URL, one plain line each: database, certificate, key, admin API.
    const messages = output.split('\n').filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l) as { msg: string }).msg);
    const listening = messages.findIndex((m) => m.startsWith('Server listening at https://127.0.0.1:'));
    const database = process.env.TEST_DATABASE_URL
      ? `database: PostgreSQL at ${new URL(process.env.TEST_DATABASE_URL).host}${new URL(process.env.TEST_DATABASE_URL).pathname} (DATABASE_URL)`
      : `database: embedded PostgreSQL (PGlite) in ${path.resolve(dataDir, 'pgdata')}`;
    expect(messages.slice(listening, listening + 5)).toEqual([
      expect.stringMatching(/^Server listening at https:/),
      database,
      `TLS certificate: ${path.resolve(dataDir, 'tls', 'localhost.crt')}, self-signed for localhost, 127.0.0.1, ::1 (trust this file in clients; key beside it)`,
      `encryption key for stored provider keys: in ${path.resolve(dataDir, 'encryption.key')}`,
      'admin API: off (ADMIN_TOKEN is not set; /v1/admin/* answers 404)',
    ]);
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(output).toContain('"msg":"shutting down"');
  }, 90_000);

  // The database starts opening before the HTTP stack loads (src/server.ts, startEarly): the
  // data directory's lock is still taken first, and a refused start says why and exits.
  it.skipIf(process.env.TEST_DATABASE_URL)('refuses to start on a DATA_DIR another live process holds, which keeps serving', async () => {
    const first = await spawnServer({ LOG_LEVEL: 'info' });
    try {
      await first.url();
      const second = spawn(process.execPath, [SERVER_ENTRY], {
        env: { PATH: process.env.PATH, PORT: '0', DATA_DIR: first.dataDir, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      second.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => second.on('exit', resolve));
      expect(code).toBe(1);
      expect(stderr).toBe(
        `Failed to start: The embedded database in ${path.resolve(first.dataDir)} is in use by process ${first.child.pid}. Stop that process, or use the running server's admin API instead.\n`,
      );
      expect((await getJson(first, '/healthz', {})).status).toBe(200);
    } finally {
      await first.stop();
    }
  }, 90_000);

  // The routes register while the embedded database opens (src/db/client.ts, `early`): one that
  // cannot open still fails the start with its own reason, and frees its directory.
  it.skipIf(process.env.TEST_DATABASE_URL)('exits 1 with the reason when the embedded database cannot open, and leaves DATA_DIR unlocked', async () => {
    const first = await spawnServer({ LOG_LEVEL: 'info' });
    await first.url();
    await first.stop();
    // Files of a PostgreSQL major this PGlite is not.
    writeFileSync(path.join(first.dataDir, 'pgdata', 'PG_VERSION'), '99\n');
    const second = spawn(process.execPath, [SERVER_ENTRY], {
      env: { PATH: process.env.PATH, PORT: '0', DATA_DIR: first.dataDir, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    second.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    second.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => second.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toBe('Failed to start: PGlite failed to initialize properly\n');
    // The lines logged before the failure are written before the process exits (src/log-destination.ts gathers them).
    expect(stdout).toContain('"msg":"opening the embedded database"');
    expect(stdout).not.toContain('Server listening');
    expect(existsSync(path.join(first.dataDir, 'embedded-db.lock'))).toBe(false);
  }, 90_000);

  // Node 22.1 and later: the compiled code goes to Node's compile cache (its default place,
  // under the OS temp directory, here TMPDIR), the next start reads it back; Node 20 has none.
  // node-postgres names a Unix socket in a form that is no WHATWG URL (`postgres://user@/db?host=`);
  // the start-up report once read DATABASE_URL as one, and such a start failed with "Invalid URL".
  it('starts on a DATABASE_URL that reaches PostgreSQL through its Unix socket', async (context) => {
    if (!process.env.TEST_DATABASE_URL) return context.skip('runs on PostgreSQL (TEST_DATABASE_URL)');
    const tcp = new URL(process.env.TEST_DATABASE_URL);
    const port = tcp.port || '5432';
    const database = tcp.pathname.slice(1);
    const socketUrl = `postgres://${tcp.username}${tcp.password ? `:${tcp.password}` : ''}@/${database}?host=${SOCKET_DIR}&port=${port}`;
    if (!(await reachable(socketUrl))) return context.skip(`no PostgreSQL socket this test may use in ${SOCKET_DIR}`);
    const server = await spawnServer({ DATABASE_URL: socketUrl, LOG_LEVEL: 'info' });
    try {
      await server.url();
      expect(await getJson(server, '/readyz', {})).toEqual({ status: 200, body: { status: 'ready' } });
      expect(server.output()).toContain(`"msg":"database: PostgreSQL through the Unix socket in ${SOCKET_DIR}, database ${database} (DATABASE_URL)"`);
    } finally {
      await server.stop();
    }
    expect(server.child.exitCode).toBe(0);
  }, 90_000);

  it('keeps compiled code in Node\'s compile cache where Node has one, and nothing where it has not', async () => {
    const temp = mkdtempSync(path.join(tmpdir(), 'ladder-compile-cache-'));
    const cache = path.join(temp, 'node-compile-cache');
    try {
      const server = await spawnServer({ LOG_LEVEL: 'info', TMPDIR: temp });
      await server.url();
      await server.stop();
      expect(server.child.exitCode).toBe(0);
      const hasCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';
      if (!hasCache) {
        expect(existsSync(cache)).toBe(false);
        return;
      }
      // One directory per Node version, holding an entry per module compiled: the bundle, its
      // database thread's, and the packages left out of it (PGlite, Fastify's compilers and Ajv, ...).
      const [version, ...others] = readdirSync(cache);
      expect(others).toEqual([]);
      expect(readdirSync(path.join(cache, version!)).length).toBeGreaterThan(10);
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
  }, 90_000);
});

/** Where Debian's PostgreSQL listens on its Unix socket. */
const SOCKET_DIR = '/var/run/postgresql';

/** Whether `url` connects (the server may not accept a socket's user, or have no socket there). */
async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
