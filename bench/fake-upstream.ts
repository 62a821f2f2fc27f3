// A chat completions upstream that answers at once with a fixed body, for the benchmark.
// Run as a child process (so it does not share an event loop with the load generator);
// it reports its port to the parent over IPC.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const body = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the bench upstream.' }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
});
const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };

const server = createServer((req, res) => {
  // Drain the request body before answering, as a real server would.
  req.resume();
  req.on('end', () => {
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
