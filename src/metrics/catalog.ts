// Every metric the service exports, in one list: the registry is built from it, and
// docs/metrics.md documents exactly these names (a test holds the two together).

export const METRIC_PREFIX = 'ladder_';

/** What a scrape answers: the Prometheus text format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricDefinition {
  name: string;
  type: MetricType;
  labels: readonly string[];
  help: string;
  /** Histogram buckets, in seconds. */
  buckets?: readonly number[];
}

// Requests range from sub-millisecond (cached reads) to minutes (ladder runs).
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
// The service's own time is meant to stay well under a millisecond.
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

const m = (name: string, type: MetricType, labels: readonly string[], help: string, buckets?: readonly number[]): MetricDefinition => ({
  name: METRIC_PREFIX + name,
  type,
  labels,
  help,
  ...(buckets ? { buckets } : {}),
});

export const METRICS = {
  httpRequests: m('http_requests_total', 'counter', ['method', 'route', 'status'], 'HTTP requests answered, by method, route pattern and status code.'),
  httpDuration: m('http_request_duration_seconds', 'histogram', ['method', 'route'], 'Time from receiving a request to the end of its response.', REQUEST_BUCKETS),
  overhead: m('http_overhead_seconds', 'histogram', ['route'], 'Time the service itself added to a request that carries server-timing (direct chat completions): its duration less the time spent waiting on vendors.', OVERHEAD_BUCKETS),
  attempts: m('provider_attempts_total', 'counter', ['provider', 'outcome', 'reason'], 'Attempts at provider connections, by provider, outcome (ok, fallback, error, skipped) and reason.'),
  attemptDuration: m('provider_attempt_duration_seconds', 'histogram', ['provider', 'outcome'], 'Duration of attempts that reached a provider (skipped ones are not observed).', ATTEMPT_BUCKETS),
  circuitState: m('provider_circuit_state', 'gauge', ['provider'], 'Worst circuit of any connection of the provider: 0 closed, 1 half-open, 2 open.'),
  openCircuits: m('provider_open_circuits', 'gauge', ['provider'], 'Connections of the provider whose circuit is open or half-open.'),
  streamFirstChunk: m('stream_first_chunk_seconds', 'histogram', ['provider'], 'Streamed chat completions: time from receiving the request to the first chunk (time to first token), fallback included, by the provider that streamed.', ATTEMPT_BUCKETS),
  streams: m('streams_total', 'counter', ['outcome'], 'Streamed chat completions that started, by outcome: completed, client_closed, upstream_error, timeout, internal_error.'),
  runs: m('runs_total', 'counter', ['mode', 'status'], 'Ladder runs that ended, by mode (sync, async) and final status.'),
  modelCalls: m('model_calls_total', 'counter', ['kind', 'outcome'], 'Model calls made through quotas and the usage ledger, by kind (direct, ladder) and outcome (ok, error).'),
  spend: m('spend_usd_total', 'counter', ['kind'], 'Spend in USD of model calls, as priced for the usage ledger, by kind (direct, ladder).'),
  usageRowsRejected: m('usage_rows_rejected_total', 'counter', [], 'Usage ledger rows the database refused and the ledger set aside (logged once each); should stay 0.'),
  logLinesDropped: m('log_lines_dropped_total', 'counter', [], 'Log lines dropped because the reader of stdout fell more than 16 MB behind (a stuck log shipper); should stay 0.'),
  instances: m('instances', 'gauge', ['status'], 'Ladder run instances pending or running, across every process on the database (read at most every 5 s).'),
  workersBusy: m('workers_busy', 'gauge', [], 'Background workers of this process that are running a ladder run now.'),
} as const satisfies Record<string, MetricDefinition>;

/**
 * prom-client's default process and Node.js metrics, exported with the same prefix; the
 * ones documented in docs/metrics.md (the others are listed there by family).
 */
export const DEFAULT_METRICS: readonly MetricDefinition[] = [
  m('nodejs_eventloop_lag_seconds', 'gauge', [], 'Event-loop lag measured by a timer at scrape time.'),
  m('nodejs_eventloop_lag_p99_seconds', 'gauge', [], '99th percentile of event-loop delay since the process started.'),
  m('process_cpu_seconds_total', 'counter', [], 'CPU time of the process, user and system.'),
  m('process_resident_memory_bytes', 'gauge', [], 'Resident memory of the process.'),
  m('nodejs_heap_size_used_bytes', 'gauge', [], 'V8 heap in use.'),
];

/** Every documented metric: the service's own and the default ones named in the docs. */
export const DOCUMENTED_METRICS: readonly MetricDefinition[] = [...Object.values(METRICS), ...DEFAULT_METRICS];
