// A local webhook receiver on 127.0.0.1: records every request (headers and raw body) and
// answers from a script, one entry per request (a status, or `hang`: never answer), then 200.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
  at: number;
}

export type ReceiverStep = number | 'hang';

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Answers for the next requests, in order; after them every request gets `fallback`. */
  script(steps: ReceiverStep[], fallback?: ReceiverStep): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let steps: ReceiverStep[] = [];
  let fallback: ReceiverStep = 200;
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body, at: Date.now() });
      const step = steps.shift() ?? fallback;
      if (step === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(step, { 'content-type': 'text/plain' }).end(`answered ${step}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    script(next, otherwise = 200) {
      steps = [...next];
      fallback = otherwise;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
