// Prometheus metrics (docs/metrics.md): decorates `app.metrics`, the recorder every service
// counts through, and times every request. With neither METRICS_TOKEN nor METRICS_PORT set,
// `app.metrics` is a recorder that does nothing, no hook is added and prom-client is not loaded.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { countActiveInstances } from '../metrics/instance-counts.js';
import { disabledMetrics } from '../metrics/disabled.js';
import type { Metrics } from '../metrics/recorder.js';
import { adapters } from '../providers/adapters/index.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts for /metrics; workers call `runFinished('async', ...)` and `workerBusy(n)` on it. */
    metrics: Metrics;
  }
}

const UNMATCHED = 'unmatched';
const UPSTREAM = 'upstream;dur=';

/** The vendor time a route reported in its server-timing header, in ms; null when it called none. */
function upstreamMs(serverTiming: unknown): number | null {
  if (typeof serverTiming !== 'string' || !serverTiming.startsWith(UPSTREAM)) return null;
  const ms = Number.parseFloat(serverTiming.slice(UPSTREAM.length));
  return Number.isFinite(ms) ? ms : null;
}

async function metricsPlugin(app: FastifyInstance) {
  const { token, port } = app.config.metrics;
  if (token === null && port === null) {
    app.decorate('metrics', disabledMetrics);
    return;
  }
  const { createMetrics } = await import('../metrics/recorder.js');
  const log = app.log.child({ component: 'metrics' });
  const metrics = createMetrics({
    providers: Object.keys(adapters),
    onCollectError: (err, what) => log.warn({ err, what }, 'reading a metric failed'),
  });
  metrics.watchInstances(() => countActiveInstances(app.db));
  app.decorate('metrics', metrics);

  app.addHook('onResponse', (request, reply, done) => {
    const ms = reply.elapsedTime;
    const upstream = upstreamMs(reply.getHeader('server-timing'));
    const overhead = upstream === null ? null : Math.max(0, ms - upstream) / 1000;
    metrics.httpRequest(request.method, request.routeOptions.url ?? UNMATCHED, reply.statusCode, ms / 1000, overhead);
    done();
  });
}

export default fp(metricsPlugin, { name: 'metrics', fastify: '5.x', dependencies: ['infrastructure'] });
