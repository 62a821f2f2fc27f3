// The least a Node.js TLS gateway can do, for the benchmarks' `floor` rows: an HTTPS server
// that reads the request body, forwards it with undici to the upstream over a kept-alive
// connection, and returns the answer: whole, or for an event stream, each piece written as it
// is read (with backpressure), without parsing it. No routing, validation, keys, quotas or logs.
// What the service adds over this is the cost of our own code; what this adds over `direct` is
// the machine's price of one TLS hop and one proxied HTTP call. A request to LADDER_PATH makes
// LADDER_CALLS calls to the upstream one after another and answers with the last: a sequential
// ladder with no run engine at all, the floor of the mixed-load row. Run as a child process:
// `bare-proxy.js <upstream> <tls dir>` (the service's DATA_DIR/tls, so that both pay the same
// TLS); it reports its port over IPC, which is otherwise left to a probe loaded with --import.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Agent, request } from 'undici';

const [upstream, tlsDir] = process.argv.slice(2) as [string, string];
const dispatcher = new Agent({ keepAliveTimeout: 60_000 });
const target = `${upstream}/v1/chat/completions`;
/** The mixed-load row's ladder, 32 calls in a row, as bench/chat-completions.ts asks for it. */
const LADDER_PATH = '/ladder';
const LADDER_CALLS = 32;
const tls = { key: readFileSync(path.join(tlsDir, 'localhost.key'), 'utf8'), cert: readFileSync(path.join(tlsDir, 'localhost.crt'), 'utf8') };

/** One call to the upstream with the client's body and key. */
const forward = (body: Buffer, authorization: string) =>
  request(target, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json', authorization }, body });

/** LADDER_CALLS calls in a row; every answer but the last is read and dropped. */
async function ladder(body: Buffer, authorization: string) {
  for (let i = 1; i < LADDER_CALLS; i++) await (await forward(body, authorization)).body.arrayBuffer();
  return forward(body, authorization);
}

const server = createServer(tls, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const authorization = req.headers.authorization ?? '';
    (req.url === LADDER_PATH ? ladder(body, authorization) : forward(body, authorization))
      .then(async (answer) => {
        const type = String(answer.headers['content-type'] ?? '');
        if (type.startsWith('text/event-stream')) {
          res.writeHead(answer.statusCode, { 'content-type': type, 'cache-control': 'no-cache' });
          for await (const piece of answer.body) if (!res.write(piece)) await once(res, 'drain');
          res.end();
          return;
        }
        const body = Buffer.from(await answer.body.arrayBuffer());
        res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': String(body.length) });
        res.end(body);
      })
      .catch(() => {
        if (res.headersSent) res.destroy();
        else res.writeHead(502).end();
      });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
