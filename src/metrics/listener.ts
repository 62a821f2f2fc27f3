// METRICS_PORT: a second, plain-HTTP listener on 127.0.0.1 that answers GET /metrics and
// nothing else, without authentication: only processes on this host can reach it (a
// Prometheus agent or sidecar). Its lifecycle is the server's (src/server.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './recorder.js';

export const METRICS_HOST = '127.0.0.1';

export interface MetricsListener {
  /** http://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(`${text}\n`);
}

export async function listenMetrics(metrics: Metrics, port: number, onError?: (error: unknown) => void): Promise<MetricsListener> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics') return plain(res, 404, 'Not found: this listener serves GET /metrics only.');
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'Method not allowed.', { allow: 'GET, HEAD' });
    metrics.scrape().then(
      (body) => {
        res.writeHead(200, { 'content-type': metrics.contentType });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (error: unknown) => {
        onError?.(error);
        plain(res, 500, 'Collecting the metrics failed.');
      },
    );
  });
  // Scrapes are small and quick; a stuck client should not hold a socket for long.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: METRICS_HOST }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${METRICS_HOST}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
