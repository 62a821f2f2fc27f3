// A chat completions upstream that answers at once with a fixed body, for the benchmark.
// Run as a child process (so it does not share an event loop with the load generator);
// it reports its port to the parent over IPC.
//
// Streaming mode, for bench/chat-stream.ts: a request whose last message says `chunks=N`
// (and maybe `interval=MS`) is answered with N content pieces of 4 characters: as OpenAI's
// event stream (`stream: true`, N chunk events `interval` ms apart, the usage chunk when asked,
// [DONE]), or whole (the same text in one answer), so both paths carry the same answer.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const PIECE = 'tok ';

const body = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the bench upstream.' }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
});
const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };

interface Asked {
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages?: Array<{ content?: unknown }>;
}

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  // Read the request body before answering, as a real server would.
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    const asked = parse(Buffer.concat(parts).toString('utf8'));
    const text = asked?.messages?.at(-1)?.content;
    const chunks = typeof text === 'string' ? /chunks=(\d+)/.exec(text) : null;
    if (!chunks) {
      res.writeHead(200, headers);
      res.end(body);
      return;
    }
    const n = Number(chunks[1]);
    const interval = Number(/interval=(\d+)/.exec(text as string)?.[1] ?? 0);
    if (asked?.stream === true) void stream(res, n, interval, asked.stream_options?.include_usage === true);
    else whole(res, n);
  });
});

function parse(text: string): Asked | null {
  try {
    return JSON.parse(text) as Asked;
  } catch {
    return null;
  }
}

const usage = (n: number) => ({ prompt_tokens: 12, completion_tokens: n, total_tokens: 12 + n });

function whole(res: ServerResponse, n: number): void {
  const answer = JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: PIECE.repeat(n) }, logprobs: null, finish_reason: 'stop' }],
    usage: usage(n),
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(answer)) });
  res.end(answer);
}

async function stream(res: ServerResponse, n: number, interval: number, includeUsage: boolean): Promise<void> {
  const base = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":';
  const event = (choices: string, tail = '') => `data: ${base}${choices}${tail}}\n\n`;
  const content = event(`[{"index":0,"delta":{"content":"${PIECE}"},"logprobs":null,"finish_reason":null}]`);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const write = async (text: string) => {
    if (!res.write(text)) await new Promise<void>((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
  };
  await write(event('[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]'));
  for (let i = 0; i < n && !res.destroyed; i++) {
    if (interval > 0) await new Promise((resolve) => setTimeout(resolve, interval));
    await write(content);
  }
  if (res.destroyed) return;
  await write(event('[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]'));
  if (includeUsage) await write(event('[]', `,"usage":${JSON.stringify(usage(n))}`));
  res.end('data: [DONE]\n\n');
}

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
