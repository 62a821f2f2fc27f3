// The built server exporting traces over OTLP to a local fake collector, in both protocols the
// service offers: configured by the standard variables only, flushed when the server stops.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { getJson, spawnServer, type SpawnedServer } from '../helpers/spawned-server.js';

interface Received {
  path: string;
  contentType: string;
  authorization: string | undefined;
  body: Buffer;
}

/** Accepts every OTLP export with 200 and keeps it. */
async function startCollector(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '', authorization: req.headers.authorization, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/json' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let server: SpawnedServer | null = null;
let collector: Awaited<ReturnType<typeof startCollector>> | null = null;
afterEach(async () => {
  await server?.kill();
  await collector?.close();
  server = collector = null;
});

async function exportOnce(protocol: 'http/json' | 'http/protobuf') {
  collector = await startCollector();
  server = await spawnServer({
    LOG_LEVEL: 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer collector-token',
    OTEL_SERVICE_NAME: 'ladder-e2e',
    OTEL_BSP_SCHEDULE_DELAY: '60000', // nothing leaves before the shutdown flush
  });
  await server.url(); // listening: its certificate is written
  const res = await getJson(server, '/v1/models', {});
  expect(res.status).toBe(401);
  expect(collector.received).toEqual([]);
  await server.stop(); // SIGTERM: the batch is exported on the way out
  expect(collector.received.length).toBeGreaterThan(0);
  return collector.received;
}

describe('OTLP export from the built server', () => {
  it('http/json: the collector gets plain JSON with the service name and the request\'s server span', async () => {
    const received = await exportOnce('http/json');
    expect(received.map((r) => [r.path, r.contentType, r.authorization])).toEqual(received.map(() => ['/v1/traces', 'application/json', 'Bearer collector-token']));
    const payloads = received.map((r) => JSON.parse(r.body.toString('utf8')));
    const resourceSpans = payloads.flatMap((p) => p.resourceSpans);
    const service = resourceSpans[0].resource.attributes.find((a: any) => a.key === 'service.name');
    expect(service.value).toEqual({ stringValue: 'ladder-e2e' });
    const spans = resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans));
    const span = spans.find((s: any) => s.name === 'GET /v1/models');
    expect(span).toBeDefined();
    const attributes = Object.fromEntries(span.attributes.map((a: any) => [a.key, a.value]));
    expect(attributes['http.route']).toEqual({ stringValue: '/v1/models' });
    expect(attributes['http.response.status_code']).toEqual({ intValue: 401 });
    expect(span.kind).toBe(2); // SPAN_KIND_SERVER
  }, 60_000);

  it('http/protobuf: the collector gets a non-empty protobuf body naming the span', async () => {
    const received = await exportOnce('http/protobuf');
    expect(received.map((r) => [r.path, r.contentType, r.authorization])).toEqual(received.map(() => ['/v1/traces', 'application/x-protobuf', 'Bearer collector-token']));
    const body = Buffer.concat(received.map((r) => r.body));
    expect(body.length).toBeGreaterThan(0);
    expect(body.includes('GET /v1/models')).toBe(true);
    expect(body.includes('ladder-e2e')).toBe(true);
  }, 60_000);
});
