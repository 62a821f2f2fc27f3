// The metrics recorder: what the rest of the service (and, later, the background workers)
// calls to count things, over one prom-client registry per application. Label children are
// created once and kept, so the hot path is a map lookup and an increment. When metrics are
// off, `disabledMetrics` (./disabled.ts) has the same API and does nothing.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { nanosToUsd } from '../money.js';
import type { Attempt } from '../providers/types.js';
import { METRIC_PREFIX, METRICS, METRICS_CONTENT_TYPE, type MetricDefinition } from './catalog.js';

export type RunMode = 'sync' | 'async';
export type RunStatus = 'completed' | 'failed' | 'cancelled';
export type CallKind = 'direct' | 'ladder';
export type CircuitState = 'closed' | 'half-open' | 'open';
export type StreamOutcome = 'completed' | 'client_closed' | 'upstream_error' | 'timeout' | 'internal_error';

/** One connection's circuit, as the router's breaker sees it. */
export interface CircuitReading {
  provider: string;
  state: CircuitState;
}

export interface InstanceCounts {
  pending: number;
  running: number;
}

export interface Metrics {
  readonly enabled: boolean;
  /** `text/plain; version=0.0.4; charset=utf-8` */
  readonly contentType: string;
  /** Every metric in the Prometheus text format. */
  scrape(): Promise<string>;
  /** One answered HTTP request; `overheadSeconds` only for requests that called providers. */
  httpRequest(method: string, route: string, status: number, seconds: number, overheadSeconds: number | null): void;
  /** Every attempt of one routed model call, in order (as ChatResult or ProviderRouteError carry them). */
  providerAttempts(attempts: readonly Attempt[]): void;
  /** A streamed chat completion sent its first chunk, `seconds` after its request arrived. */
  streamStarted(provider: string, seconds: number): void;
  /** A stream that started ended. */
  streamEnded(outcome: StreamOutcome): void;
  /** A ladder run ended (the synchronous route counts its own; workers call this for async runs). */
  runFinished(mode: RunMode, status: RunStatus): void;
  /** A model call passed through metering: counted, and its cost added to the spend. */
  modelCall(kind: CallKind, ok: boolean, costNanos: number): void;
  /** The usage ledger set aside a row the database refused. */
  usageRowRejected(): void;
  /** How many of this process's background workers are running a run now. */
  workerBusy(busy: number): void;
  /** Read at scrape time: every connection whose circuit is not known to be closed. */
  watchCircuits(read: () => Iterable<CircuitReading>): void;
  /** Read at scrape time, at most every `cacheMs`: pending and running instances. */
  watchInstances(read: () => Promise<InstanceCounts>, cacheMs?: number): void;
  /** Read at scrape time: log lines dropped since the start (src/log-destination.ts). */
  watchLogDrops(read: () => number): void;
}

const CIRCUIT_VALUE: Record<CircuitState, number> = { closed: 0, 'half-open': 1, open: 2 };
type AttemptOutcome = 'ok' | 'fallback' | 'error' | 'skipped';

export interface MetricsOptions {
  /** Provider ids from the catalog: their series exist (at zero) from the start. */
  providers: readonly string[];
  /** Logs a failed scrape-time read. */
  onCollectError?: (error: unknown, what: string) => void;
}

export function createMetrics(options: MetricsOptions): Metrics {
  const register = new Registry();
  collectDefaultMetrics({ register, prefix: METRIC_PREFIX });
  const providers = new Set(options.providers);
  const counter = (d: MetricDefinition, collect?: () => void | Promise<void>) =>
    new Counter({ name: d.name, help: d.help, labelNames: [...d.labels], registers: [register], ...(collect ? { collect } : {}) });
  const gauge = (d: MetricDefinition, collect?: () => void | Promise<void>) =>
    new Gauge({ name: d.name, help: d.help, labelNames: [...d.labels], registers: [register], ...(collect ? { collect } : {}) });
  const histogram = (d: MetricDefinition) =>
    new Histogram({ name: d.name, help: d.help, labelNames: [...d.labels], buckets: [...(d.buckets ?? [])], registers: [register] });

  const httpRequests = counter(METRICS.httpRequests);
  const httpDuration = histogram(METRICS.httpDuration);
  const overhead = histogram(METRICS.overhead);
  const attempts = counter(METRICS.attempts);
  const attemptDuration = histogram(METRICS.attemptDuration);
  const runs = counter(METRICS.runs);
  const streamFirstChunk = histogram(METRICS.streamFirstChunk);
  const streams = counter(METRICS.streams);
  const modelCalls = counter(METRICS.modelCalls);
  const spend = counter(METRICS.spend);
  const usageRowsRejected = counter(METRICS.usageRowsRejected);
  // The destination keeps its own count, made before this registry; a scrape adds what it grew by.
  let readLogDrops: () => number = () => 0;
  let logDropsSeen = 0;
  const logLinesDropped = counter(METRICS.logLinesDropped, () => {
    const total = readLogDrops();
    if (total > logDropsSeen) logLinesDropped.inc(total - logDropsSeen);
    logDropsSeen = Math.max(logDropsSeen, total);
  });
  logLinesDropped.inc(0);
  const workersBusy = gauge(METRICS.workersBusy);
  workersBusy.set(0);

  let readCircuits: () => Iterable<CircuitReading> = () => [];
  const circuitState = gauge(METRICS.circuitState, () => setCircuits());
  const openCircuits = gauge(METRICS.openCircuits, () => setCircuits());
  function setCircuits(): void {
    const worst = new Map<string, number>();
    const open = new Map<string, number>();
    for (const id of providers) {
      worst.set(id, 0);
      open.set(id, 0);
    }
    for (const { provider, state } of readCircuits()) {
      const value = CIRCUIT_VALUE[state];
      if (value === 0 || !providers.has(provider)) continue;
      worst.set(provider, Math.max(worst.get(provider) ?? 0, value));
      open.set(provider, (open.get(provider) ?? 0) + 1);
    }
    for (const [provider, value] of worst) circuitState.labels(provider).set(value);
    for (const [provider, value] of open) openCircuits.labels(provider).set(value);
  }

  let readInstances: (() => Promise<InstanceCounts>) | null = null;
  let instancesCacheMs = 5000;
  let cached: { at: number; counts: InstanceCounts } | null = null;
  let reading: Promise<void> | null = null;
  const instances = gauge(METRICS.instances, async () => {
    if (!readInstances || (cached && performance.now() - cached.at < instancesCacheMs)) return;
    // Concurrent scrapes share one query.
    reading ??= readInstances()
      .then((counts) => {
        cached = { at: performance.now(), counts };
        instances.labels('pending').set(counts.pending);
        instances.labels('running').set(counts.running);
      })
      .catch((error: unknown) => options.onCollectError?.(error, 'instances'))
      .finally(() => {
        reading = null;
      });
    await reading;
  });
  instances.labels('pending').set(0);
  instances.labels('running').set(0);

  // Children per label combination, created on first use and kept.
  const httpChildren = new Map<string, { count: Counter.Internal; duration: Histogram.Internal<string> }>();
  const overheadChildren = new Map<string, Histogram.Internal<string>>();
  const attemptChildren = new Map<string, { count: Counter.Internal; duration: Histogram.Internal<string> }>();

  // Series of known label sets exist at zero from the start, so rate() sees their first increase.
  const zeroed = (child: Counter.Internal) => (child.inc(0), child);
  const runChildren = new Map<string, Counter.Internal>();
  for (const mode of ['sync', 'async'] as const) {
    for (const status of ['completed', 'failed', 'cancelled'] as const) runChildren.set(`${mode}:${status}`, zeroed(runs.labels(mode, status)));
  }
  const callChildren = {
    direct: { ok: zeroed(modelCalls.labels('direct', 'ok')), error: zeroed(modelCalls.labels('direct', 'error')), spend: zeroed(spend.labels('direct')) },
    ladder: { ok: zeroed(modelCalls.labels('ladder', 'ok')), error: zeroed(modelCalls.labels('ladder', 'error')), spend: zeroed(spend.labels('ladder')) },
  };
  for (const provider of providers) zeroed(attemptChild(provider, 'ok', 'none').count);

  function attemptChild(provider: string, outcome: AttemptOutcome, reason: string) {
    const key = `${provider}:${outcome}:${reason}`;
    let child = attemptChildren.get(key);
    if (!child) {
      child = { count: attempts.labels(provider, outcome, reason), duration: attemptDuration.labels(provider, outcome) };
      attemptChildren.set(key, child);
    }
    return child;
  }

  return {
    enabled: true,
    contentType: METRICS_CONTENT_TYPE,
    scrape: () => register.metrics(),

    httpRequest(method, route, status, seconds, overheadSeconds) {
      const key = `${method} ${route} ${status}`;
      let child = httpChildren.get(key);
      if (!child) {
        child = { count: httpRequests.labels(method, route, String(status)), duration: httpDuration.labels(method, route) };
        httpChildren.set(key, child);
      }
      child.count.inc();
      child.duration.observe(seconds);
      if (overheadSeconds !== null) {
        let o = overheadChildren.get(route);
        if (!o) overheadChildren.set(route, (o = overhead.labels(route)));
        o.observe(overheadSeconds);
      }
    },

    providerAttempts(list) {
      // A failed attempt followed by another real try is a fallback; the last one is the error.
      let laterTry = false;
      for (let i = list.length - 1; i >= 0; i--) {
        const a = list[i]!;
        const provider = providers.has(a.provider) ? a.provider : 'other';
        const outcome = a.outcome === 'ok' ? 'ok' : a.outcome === 'skipped' ? 'skipped' : laterTry ? 'fallback' : 'error';
        const child = attemptChild(provider, outcome, a.reason ?? 'none');
        child.count.inc();
        if (a.outcome !== 'skipped') {
          child.duration.observe(a.latencyMs / 1000);
          laterTry = true;
        }
      }
    },

    streamStarted(provider, seconds) {
      streamFirstChunk.labels(provider).observe(seconds);
    },

    streamEnded(outcome) {
      streams.labels(outcome).inc();
    },

    runFinished(mode, status) {
      runChildren.get(`${mode}:${status}`)?.inc();
    },

    modelCall(kind, ok, costNanos) {
      const child = callChildren[kind];
      (ok ? child.ok : child.error).inc();
      // Prometheus counts in base units (USD); the counter's own sum of doubles is what scrapers expect.
      if (costNanos > 0) child.spend.inc(nanosToUsd(costNanos));
    },

    usageRowRejected() {
      usageRowsRejected.inc();
    },

    workerBusy(busy) {
      workersBusy.set(busy);
    },

    watchCircuits(read) {
      readCircuits = read;
    },

    watchInstances(read, cacheMs = 5000) {
      readInstances = read;
      instancesCacheMs = cacheMs;
      cached = null;
    },

    watchLogDrops(read) {
      readLogDrops = read;
    },
  };
}
