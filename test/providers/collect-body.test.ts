// The collecting handler a whole vendor answer is read with (src/providers/collect-body.ts),
// against a raw HTTP server that misbehaves the ways a hostile or broken vendor can.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyCollector, ERROR_BODY_LIMIT, RESPONSE_TOO_LARGE, bodyText, rawHeader } from '../../src/providers/collect-body.js';

let server: Server | null = null;
let agent: Agent | null = null;

afterEach(async () => {
  await agent?.destroy();
  agent = null;
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(null));
  server = null;
});

/** A server answering with `handler`; returns its origin and the agent to reach it. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ origin: string; dispatcher: Agent }> {
  server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  agent = new Agent({ keepAliveTimeout: 10_000 });
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, dispatcher: agent };
}

const post = (origin: string) => ({ origin, path: '/v1/chat/completions', method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: '{}' });

async function rejectionOf(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('BodyCollector', () => {
  it('collects an answer sent in several chunks without a declared length, and reads one header without parsing the rest', async () => {
    const { origin, dispatcher } = await serve((_req, res) => {
      res.writeHead(200, { 'X-Request-Id': 'req_42', 'content-type': 'application/json' });
      res.write('{"a":');
      setTimeout(() => res.end('"é"}'), 20);
    });
    const answer = await new BodyCollector(dispatcher, post(origin), 1024).answer;
    expect(answer.status).toBe(200);
    expect(answer.chunks.length).toBe(2);
    expect(bodyText(answer)).toBe('{"a":"é"}');
    expect(rawHeader(answer.rawHeaders, 'x-request-id')).toBe('req_42');
    expect(rawHeader(answer.rawHeaders, 'x-request')).toBeUndefined();
  });

  it('fails a declared length over the limit before reading the body', async () => {
    let closed = false;
    const { origin, dispatcher } = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
      res.write('x'.repeat(100)); // and never the rest
      res.on('close', () => (closed = true));
    });
    const error = await rejectionOf(new BodyCollector(dispatcher, post(origin), 1024).answer);
    expect(error.code).toBe(RESPONSE_TOO_LARGE);
    await expect.poll(() => closed).toBe(true);
  });

  it('fails, and closes the connection, when an undeclared body passes the limit mid-way', async () => {
    let closed = false;
    let written = 0;
    const { origin, dispatcher } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('close', () => (closed = true));
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write('y'.repeat(1024));
        written += 1024;
      }, 5);
    });
    const error = await rejectionOf(new BodyCollector(dispatcher, post(origin), 4096).answer);
    expect(error.code).toBe(RESPONSE_TOO_LARGE);
    await expect.poll(() => closed).toBe(true);
    expect(written).toBeLessThan(64 * 1024);
  });

  it('rejects when the vendor resets the connection mid-body (never a truncated answer)', async () => {
    const { origin, dispatcher } = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"partial":');
      setTimeout(() => res.socket?.destroy(), 10);
    });
    const error = await rejectionOf(new BodyCollector(dispatcher, post(origin), 1024).answer);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).not.toBe(RESPONSE_TOO_LARGE);
  });

  it('settles at once with the reason when aborted, frees the socket, and the agent serves the next call', async () => {
    let closed = 0;
    let hang = true;
    let arrived = false;
    const { origin, dispatcher } = await serve((_req, res) => {
      res.on('close', () => (closed += 1));
      if (hang) {
        hang = false;
        arrived = true;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"slow":'); // and the rest never comes
        return;
      }
      res.end('{"ok":true}');
    });
    const collector = new BodyCollector(dispatcher, post(origin), 1024);
    await expect.poll(() => arrived).toBe(true);
    const reason = new Error('caller hung up');
    collector.abort(reason);
    expect(await rejectionOf(collector.answer)).toBe(reason);
    await expect.poll(() => closed).toBe(1);
    const next = await new BodyCollector(dispatcher, post(origin), 1024).answer;
    expect(bodyText(next)).toBe('{"ok":true}');
  });

  it('settles at once when aborted before a socket is assigned, and sends nothing', async () => {
    let requests = 0;
    const { origin, dispatcher } = await serve((_req, res) => {
      requests += 1;
      res.end('{}');
    });
    const collector = new BodyCollector(dispatcher, post(origin), 1024);
    const reason = new Error('timed out');
    collector.abort(reason);
    expect(await rejectionOf(collector.answer)).toBe(reason);
    expect(bodyText(await new BodyCollector(dispatcher, post(origin), 1024).answer)).toBe('{}');
    expect(requests).toBe(1);
  });

  it('keeps an error answer to its status when its body passes the error limit', async () => {
    const { origin, dispatcher } = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json', 'retry-after': '3' });
      res.end('z'.repeat(ERROR_BODY_LIMIT + 1));
    });
    const answer = await new BodyCollector(dispatcher, post(origin), 4 * 1024 * 1024).answer;
    expect(answer.status).toBe(500);
    expect(bodyText(answer)).toBe('');
    expect(rawHeader(answer.rawHeaders, 'retry-after')).toBe('3');
  });

  it('reads an error answer under the error limit whole, whatever the success limit', async () => {
    const { origin, dispatcher } = await serve((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"slow down"}}');
    });
    const answer = await new BodyCollector(dispatcher, post(origin), 8).answer;
    expect(answer.status).toBe(429);
    expect(bodyText(answer)).toBe('{"error":{"message":"slow down"}}');
  });
});
