// The wire-level half of the fuzz test (fuzz.test.ts goes through inject): generated
// connections to a real TLS listener. Half-open handshakes (0x16, any prefix of a ClientHello,
// then silence), oversize and overmany headers, odd HTTP versions, compressed bodies, random
// bytes. Whatever arrives, every connection is closed within a bound, every answer is never a
// 5xx and is in the envelope, and /healthz still answers. FUZZ_SEED=<seed> reproduces a failure.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/server.js';
import type { Database } from '../src/db/client.js';
import { testConfig } from './helpers/build.js';
import { openTestDatabase } from './helpers/database.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const CONNECTIONS = Number(process.env.FUZZ_CONNECTIONS ?? 120);
const HANDSHAKE_MS = 1000;
const HEADERS_MS = 1000;
// Every connection must be closed by the server within this, whatever it sent.
const CLOSE_WITHIN_MS = 5_000;

/** mulberry32, as in fuzz.test.ts. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { int, pick: <T,>(items: readonly T[]): T => items[int(items.length)]! };
}
type Random = ReturnType<typeof generator>;

/** The first flight of a real TLS client: its ClientHello. */
async function clientHello(): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const hello = new Promise<Buffer>((resolve) => server.once('connection', (s) => s.once('data', (chunk: Buffer) => { resolve(chunk); s.destroy(); })));
  const client = tls.connect({ port: (server.address() as net.AddressInfo).port, host: '127.0.0.1', servername: 'localhost' });
  client.on('error', () => {});
  const bytes = await hello;
  client.destroy();
  server.close();
  return bytes;
}

/** An HTTP request with one odd thing about it, to send over TLS. */
function oddRequest(r: Random): string | Buffer {
  const version = r.pick(['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', '', 'HTTP/9.9', 'HTTP/1.2', 'http/1.1']);
  const target = r.pick(['/healthz', '/v1/validate', '/v1/admin/accounts', '/docs', '/nope', '*', 'http://x/healthz']);
  const line = `${r.pick(['GET', 'POST', 'DELETE', 'OPTIONS', 'BREW'])} ${target}${version ? ` ${version}` : ''}\r\n`;
  const headers = ['Host: localhost', 'Connection: close'];
  switch (r.int(5)) {
    case 0: headers.push(`X-Big: ${'a'.repeat(r.pick([8_000, 20_000, 64 * 1024, 200_000]))}`); break;
    case 1: for (let i = r.pick([100, 2000, 3000]); i > 0; i--) headers.push(`X-H${i}: v`); break;
    case 2: {
      const body = r.int(2) === 0 ? gzipSync('{"config":{}}') : Buffer.from('{"config":{}}');
      const head = `${line}${headers.join('\r\n')}\r\nContent-Type: application/json\r\nContent-Encoding: ${r.pick(['gzip', 'br', 'identity'])}\r\nContent-Length: ${body.length}\r\n\r\n`;
      return Buffer.concat([Buffer.from(head), body]);
    }
    case 3: headers.push(r.pick(['Transfer-Encoding: chunked\r\nContent-Length: 5', 'Content-Length: -1', 'Expect: x', 'X: \u0000']));
  }
  return `${line}${headers.join('\r\n')}\r\n\r\n`;
}

interface Outcome {
  answer: string;
  closedAfterMs: number | null;
}

/** Sends `bytes` over `socket` (after its handshake, for TLS) and waits for the server to close it. */
function run(socket: net.Socket, connectEvent: 'connect' | 'secureConnect', bytes: Buffer | string): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ answer, closedAfterMs: null });
    }, CLOSE_WITHIN_MS);
    socket.once(connectEvent, () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, closedAfterMs: performance.now() - started });
    });
  });
}

/** What is wrong with an HTTP answer, or null. No answer at all is fine for bytes that are not HTTP. */
function judge(answer: string): string | null {
  if (answer === '') return null;
  const match = /^HTTP\/1\.1 (\d{3}) [^\r\n]*\r\n/.exec(answer);
  if (!match) return `not an HTTP answer: ${JSON.stringify(answer.slice(0, 200))}`;
  const status = Number(match[1]);
  if (status >= 500 && status !== 505) return `status ${status}: ${answer.slice(0, 300)}`;
  if (status < 400) return null;
  const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
  try {
    const error = (JSON.parse(body) as { error?: Record<string, unknown> }).error;
    return error && ['message', 'type', 'code', 'param'].every((k) => k in error) ? null : `status ${status}: not the envelope: ${body.slice(0, 200)}`;
  } catch {
    return `status ${status}: body is not JSON: ${body.slice(0, 200)}`;
  }
}

describe('wire fuzz against the TLS listener', () => {
  const config = testConfig({ PORT: '0', TLS_HANDSHAKE_TIMEOUT_MS: String(HANDSHAKE_MS), HEADERS_TIMEOUT_MS: String(HEADERS_MS) });
  let server: RunningServer;
  let database: Database;
  let ca: string;
  let port: number;
  beforeAll(async () => {
    database = await openTestDatabase();
    server = await startServer(config, { database });
    ca = readFileSync(path.join(config.dataDir, 'tls', 'localhost.crt'), 'utf8');
    port = Number(new URL(server.url).port);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it(`closes ${CONNECTIONS} generated connections in bounded time, answering only in the envelope (seed ${SEED})`, async () => {
    const r = generator(SEED);
    const hello = await clientHello();
    const failures: string[] = [];
    // In batches, so that silent connections overlap as they would in an attack.
    for (let i = 0; i < CONNECTIONS && failures.length < 10; i += 20) {
      const batch = Array.from({ length: Math.min(20, CONNECTIONS - i) }, (_, j) => {
        const kind = r.int(4);
        const what =
          kind === 0 ? { label: 'half-open handshake', bytes: hello.subarray(0, 1 + r.int(hello.length - 1)) }
          : kind === 1 ? { label: 'random bytes', bytes: Buffer.from(Array.from({ length: 1 + r.int(64) }, () => r.int(256))) }
          : { label: 'odd request over TLS', bytes: oddRequest(r) };
        const socket = what.label === 'odd request over TLS'
          ? tls.connect({ port, host: '127.0.0.1', ca, servername: 'localhost' })
          : net.connect(port, '127.0.0.1');
        const describeIt = () => `#${i + j} ${what.label}: ${JSON.stringify(what.bytes.toString('latin1').slice(0, 120))}`;
        return run(socket, socket instanceof tls.TLSSocket ? 'secureConnect' : 'connect', what.bytes).then((outcome) => {
          if (outcome.closedAfterMs === null) failures.push(`${describeIt()}: still open after ${CLOSE_WITHIN_MS} ms`);
          const problem = judge(outcome.answer);
          if (problem) failures.push(`${describeIt()}: ${problem}`);
        });
      });
      await Promise.all(batch);
    }
    if (failures.length > 0) console.error(`wire fuzz failed with FUZZ_SEED=${SEED}:\n${failures.join('\n')}`);
    expect(failures, `FUZZ_SEED=${SEED}`).toEqual([]);
    const health = await new Promise<number>((resolve, reject) => {
      https.get(`${server.url}/healthz`, { ca, agent: false }, (res) => resolve(res.resume().statusCode!)).on('error', reject);
    });
    expect(health).toBe(200);
  }, 120_000);
});
