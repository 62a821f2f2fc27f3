// Every answer the real server gives is in the envelope, including the ones Node's HTTP
// server would otherwise write on its own: unsupported Expect, missing Host, CONNECT.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/server.js';
import type { Database } from '../src/db/client.js';
import { testConfig } from './helpers/build.js';
import { openTestDatabase } from './helpers/database.js';

/** Writes raw bytes (over TLS when `ca` is given) and reads until the server closes. */
function exchange(port: number, request: string, ca?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onConnect = () => socket.write(request);
    const socket = ca ? tls.connect({ port, host: '127.0.0.1', ca, servername: 'localhost' }, onConnect) : net.connect(port, '127.0.0.1', onConnect);
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (data += c));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => reject(new Error(`no answer; got so far: ${JSON.stringify(data)}`)));
  });
}

function parse(answer: string) {
  const [head, ...rest] = answer.split('\r\n\r\n');
  const [statusLine, ...lines] = head!.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n\r\n')) };
}

const portOf = (server: RunningServer) => Number(new URL(server.url).port);
const expectHeader = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nExpect: x\r\nConnection: close\r\n\r\n';
const expectationFailed = {
  error: { message: 'Unsupported Expect header "x": only "100-continue" is supported.', type: 'invalid_request_error', code: 'expectation_failed', param: 'expect' },
};

const headersTooLarge = {
  error: { message: 'The request headers are larger than this server accepts.', type: 'invalid_request_error', code: 'headers_too_large', param: null },
};
const requestTimeout = {
  error: { message: 'The request was not received in time.', type: 'invalid_request_error', code: 'request_timeout', param: null },
};
const HEADERS_TIMEOUT_MS = 1000;

describe('the HTTPS server answers only in the envelope', () => {
  const config = testConfig({ PORT: '0', HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) });
  let server: RunningServer;
  let database: Database;
  let ca: string;
  beforeAll(async () => {
    database = await openTestDatabase();
    server = await startServer(config, { database });
    ca = readFileSync(path.join(config.dataDir, 'tls', 'localhost.crt'), 'utf8');
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('answers an unsupported Expect with 417 expectation_failed', async () => {
    const res = parse(await exchange(portOf(server), expectHeader, ca));
    expect(res.status).toBe(417);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body).toEqual(expectationFailed);
  });

  it('still honours Expect: 100-continue', async () => {
    const answer = await exchange(
      portOf(server),
      'POST /v1/validate HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
      ca,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 401 /);
    expect(JSON.parse(answer.split('\r\n\r\n').at(-1)!).error.code).toBe('missing_api_key');
  });

  it('answers an HTTP/1.1 request without Host with 400 missing_host_header', async () => {
    const res = parse(await exchange(portOf(server), 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n', ca));
    expect(res.status).toBe(400);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body).toEqual({
      error: { message: 'An HTTP/1.1 request must have a Host header.', type: 'invalid_request_error', code: 'missing_host_header', param: null },
    });
    // HTTP/1.0 has no Host requirement.
    expect(parse(await exchange(portOf(server), 'GET /healthz HTTP/1.0\r\n\r\n', ca)).body).toEqual({ status: 'ok' });
  });

  it('answers CONNECT with 400 unsupported_method instead of dropping the connection', async () => {
    const res = parse(await exchange(portOf(server), 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', ca));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { message: 'CONNECT is not supported: this service is not a proxy.', type: 'invalid_request_error', code: 'unsupported_method', param: null },
    });
  });

  it('answers 64 KB of headers, or 3,000 headers, with 431 headers_too_large', async () => {
    const big = `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\nConnection: close\r\n\r\n`;
    const many = `GET /healthz HTTP/1.1\r\nHost: localhost\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v\r\n`).join('')}Connection: close\r\n\r\n`;
    for (const request of [big, many]) {
      const res = parse(await exchange(portOf(server), request, ca));
      expect(res.status).toBe(431);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual(headersTooLarge);
    }
  });

  it('answers HTTP/2.0, HTTP/0.9 and a request line without a version with 505 http_version_not_supported', async () => {
    const cases: Array<[string, string]> = [
      ['GET /healthz HTTP/2.0\r\nHost: localhost\r\n\r\n', 'HTTP/2.0 is not supported: send HTTP/1.1.'],
      ['GET /healthz HTTP/0.9\r\n\r\n', 'The request line has no HTTP version: send HTTP/1.1.'],
      ['GET /healthz\r\n\r\n', 'The request line has no HTTP version: send HTTP/1.1.'],
    ];
    for (const [request, message] of cases) {
      const res = parse(await exchange(portOf(server), request, ca));
      expect(res.status, request).toBe(505);
      expect(res.headers.connection, request).toBe('close');
      expect(res.body, request).toEqual({ error: { message, type: 'invalid_request_error', code: 'http_version_not_supported', param: null } });
    }
    // HTTP/1.0 is still served.
    expect(parse(await exchange(portOf(server), 'GET /healthz HTTP/1.0\r\n\r\n', ca)).status).toBe(200);
  });

  it('answers a connection that stops half-way through its headers with 408 at HEADERS_TIMEOUT_MS', async () => {
    for (const bytes of ['', 'GET /healthz HTTP/1.1\r\nHost: loc']) {
      const res = parse(await exchange(portOf(server), bytes, ca));
      expect(res.status, bytes).toBe(408);
      expect(res.body, bytes).toEqual(requestTimeout);
    }
  });

  it('answers https_required to plain HTTP whatever it expects or asks', async () => {
    for (const request of [expectHeader, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n']) {
      const res = parse(await exchange(portOf(server), request));
      expect(res.status, request).toBe(400);
      expect(res.body.error.code, request).toBe('https_required');
    }
  });
});

describe('behind a proxy (TRUST_PROXY), too', () => {
  let server: RunningServer;
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
    server = await startServer(testConfig({ PORT: '0', TRUST_PROXY: 'true', HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) }), { database });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('answers an unsupported Expect with 417 in the envelope', async () => {
    const res = parse(await exchange(portOf(server), expectHeader));
    expect(res.status).toBe(417);
    expect(res.body).toEqual(expectationFailed);
  });

  it('answers 431, 505 and 408 in the envelope, too', async () => {
    const many = `GET /healthz HTTP/1.1\r\nHost: localhost\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v\r\n`).join('')}\r\n`;
    expect(parse(await exchange(portOf(server), many)).body).toEqual(headersTooLarge);
    expect(parse(await exchange(portOf(server), 'GET /healthz HTTP/2.0\r\nHost: localhost\r\n\r\n')).status).toBe(505);
    // A silent connection, and one that stops in its headers, are closed at HEADERS_TIMEOUT_MS.
    for (const bytes of ['', 'GET /healthz HTTP/1.1\r\nHost: loc']) expect(parse(await exchange(portOf(server), bytes)).body, bytes).toEqual(requestTimeout);
  });
});
