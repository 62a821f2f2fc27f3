import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VendorBody } from '../../../src/providers/stream/vendor-body.js';

let origin = '';
let onRequest: (res: ServerResponse) => void = () => {};
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => onRequest(res));
});
const agent = new Agent();

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await agent.close();
  server.closeAllConnections();
  server.close();
});

const open = (signal = new AbortController().signal) => new VendorBody(agent, { origin, path: '/', method: 'POST', body: '{}' }, signal);

async function readAll(body: VendorBody): Promise<string[]> {
  const pieces: string[] = [];
  for await (const piece of body) pieces.push(Buffer.from(piece).toString('utf8'));
  return pieces;
}

describe('VendorBody', () => {
  it('gives the status and headers, then the pieces of one network read in one piece, then the end', async () => {
    onRequest = (res) => {
      res.writeHead(201, { 'x-request-id': 'req-1' });
      // Written in one tick: Node sends them in one socket write, so they arrive in one read.
      res.write('data: a\n\n');
      res.write('data: b\n\n');
      res.end('data: [DONE]\n\n');
    };
    const body = open();
    await body.head;
    expect(body.status).toBe(201);
    expect(body.rawHeaders.map(String)).toContain('req-1');
    expect(await readAll(body)).toEqual(['data: a\n\ndata: b\n\ndata: [DONE]\n\n']);
  });

  it('keeps the order of pieces that come apart', async () => {
    onRequest = (res) => {
      res.writeHead(200);
      res.write('one ');
      setTimeout(() => res.end('two'), 20);
    };
    const body = open();
    await body.head;
    expect((await readAll(body)).join('')).toBe('one two');
  });

  it('an abort rejects a reader that waits, and the head of an answer not yet begun', async () => {
    onRequest = (res) => {
      res.writeHead(200);
      res.write('first');
    };
    const controller = new AbortController();
    const body = open(controller.signal);
    await body.head;
    const first = await body.next();
    expect(Buffer.from(first.value as Uint8Array).toString()).toBe('first');
    const waiting = body.next();
    controller.abort(new Error('caller left'));
    await expect(waiting).rejects.toThrow('caller left');

    onRequest = () => {};
    const never = new AbortController();
    const unanswered = open(never.signal);
    never.abort(new Error('gone before the head'));
    await expect(unanswered.head).rejects.toThrow('gone before the head');
  });
});
