// Connections that never finish their TLS handshake are bounded in time and in number: a client
// sending 0x16 (or half a ClientHello, or a ClientHello one byte at a time) and then nothing is
// dropped at TLS_HANDSHAKE_TIMEOUT_MS, more than MAX_HANDSHAKING_CONNECTIONS of them drop the
// oldest, and the service keeps answering over HTTPS all the while.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server.js';
import type { Database } from '../../src/db/client.js';
import { testConfig } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

const DEADLINE_MS = 1500;
const MAX_HANDSHAKING = 20;

/** A raw connection that sends `bytes` and then nothing; `closed` is set once the server drops it. */
function halfOpen(port: number, bytes: Buffer) {
  const state = { closed: false, closedAt: 0 };
  const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
  socket.on('error', () => {});
  // Read (and ignore) what comes, such as a TLS alert, so that the server's close is seen.
  socket.resume();
  socket.on('close', () => Object.assign(state, { closed: true, closedAt: performance.now() }));
  return { state, socket };
}

/** The first flight of a real TLS client: its ClientHello. */
async function clientHello(): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const hello = new Promise<Buffer>((resolve) => server.once('connection', (s) => s.once('data', (chunk: Buffer) => { resolve(chunk); s.destroy(); })));
  const client = tls.connect({ port, host: '127.0.0.1', servername: 'localhost' });
  client.on('error', () => {});
  const bytes = await hello;
  client.destroy();
  server.close();
  return bytes;
}

async function until(condition: () => boolean, limitMs: number): Promise<boolean> {
  for (const started = performance.now(); performance.now() - started < limitMs; ) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return condition();
}

describe('TLS handshakes that never finish', () => {
  const config = testConfig({ PORT: '0', TLS_HANDSHAKE_TIMEOUT_MS: String(DEADLINE_MS), MAX_HANDSHAKING_CONNECTIONS: String(MAX_HANDSHAKING) });
  let server: RunningServer;
  let database: Database;
  let ca: string;
  let port: number;
  let hello: Buffer;
  const healthz = () =>
    new Promise<number>((resolve, reject) => {
      https.get(`${server.url}/healthz`, { ca, agent: false }, (res) => resolve(res.resume().statusCode!)).on('error', reject);
    });
  beforeAll(async () => {
    database = await openTestDatabase();
    server = await startServer(config, { database });
    ca = readFileSync(path.join(config.dataDir, 'tls', 'localhost.crt'), 'utf8');
    port = Number(new URL(server.url).port);
    hello = await clientHello();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('drops a connection that sent 0x16, or half a ClientHello, and went silent, at the deadline', async () => {
    expect(hello[0]).toBe(0x16);
    const started = performance.now();
    const connections = [halfOpen(port, Buffer.from([0x16])), halfOpen(port, hello.subarray(0, Math.floor(hello.length / 2)))];
    // Still open half-way to the deadline: the deadline is the handshake's, not an instant refusal.
    await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS / 2));
    expect(connections.map((c) => c.state.closed)).toEqual([false, false]);
    expect(await healthz()).toBe(200);
    expect(await until(() => connections.every((c) => c.state.closed), DEADLINE_MS * 3)).toBe(true);
    for (const { state } of connections) expect(state.closedAt - started).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
  });

  it('does not let a ClientHello trickled one byte at a time outlive the deadline', async () => {
    const { state, socket } = halfOpen(port, hello.subarray(0, 1));
    let sent = 1;
    const trickle = setInterval(() => {
      if (sent < hello.length && !state.closed) socket.write(hello.subarray(sent, ++sent));
    }, 100);
    try {
      // Each byte would reset an idle timer; a deadline ignores them.
      expect(await until(() => state.closed, DEADLINE_MS * 3)).toBe(true);
      expect(sent).toBeLessThan(hello.length);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });

  it('keeps at most MAX_HANDSHAKING_CONNECTIONS, dropping the oldest, while /healthz answers', async () => {
    const first = Array.from({ length: MAX_HANDSHAKING }, () => halfOpen(port, Buffer.from([0x16])));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(first.filter((c) => c.state.closed)).toHaveLength(0);
    const more = Array.from({ length: MAX_HANDSHAKING / 2 }, () => halfOpen(port, Buffer.from([0x16])));
    // Each newcomer pushes out one of the oldest; the newcomers themselves wait their turn.
    expect(await until(() => first.filter((c) => c.state.closed).length === MAX_HANDSHAKING / 2, 1000)).toBe(true);
    expect(more.filter((c) => c.state.closed)).toHaveLength(0);
    // A real client's handshake evicts one more silent connection and is served.
    expect(await healthz()).toBe(200);
    expect(await until(() => [...first, ...more].every((c) => c.state.closed), DEADLINE_MS * 3)).toBe(true);
  });

  it('drops a connection whose handshake is broken (a record longer than TLS allows) without waiting for the deadline', async () => {
    const { state } = halfOpen(port, Buffer.from('\x16\x03\x01\xff\xffGET / HTTP/1.1\r\n\r\n', 'latin1'));
    expect(await until(() => state.closed, DEADLINE_MS / 2)).toBe(true);
  });

  it('drops connections still handshaking when the server closes', async () => {
    const { state } = halfOpen(port, Buffer.from([0x16]));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = server.close();
    expect(await until(() => state.closed, DEADLINE_MS / 2)).toBe(true);
    await closing;
  });
});
