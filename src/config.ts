// Configuration is read from the environment once, at boot, and nowhere else.
// Every setting is documented in README.md; a bad value stops the boot naming the variable.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { ModelPrice } from './pricing/prices.js';
import { loadPricesFile, PricesFileError } from './pricing/prices-file.js';

const Bool = Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('1'), Type.Literal('0')]);
// gRPC is not offered: its exporter would add a native HTTP/2 stack for what HTTP does as well.
const OtlpProtocol = Type.Union([Type.Literal('http/protobuf'), Type.Literal('http/json')]);
const Int = (min: number, max: number, dflt: number) =>
  Type.Integer({ minimum: min, maximum: max, default: dflt });

/** The environment variables we read, with their defaults. */
/** Every setting the service reads; .env.example lists each one with its default (checked by a test). */
export const EnvSchema = Type.Object({
  PORT: Int(0, 65535, 8443),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  TLS_CERT_FILE: Type.Optional(Type.String({ minLength: 1 })),
  TLS_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  TLS_SELF_SIGNED_HOSTS: Type.Optional(Type.String()),
  TRUST_PROXY: Type.Optional(Bool),
  TLS_HANDSHAKE_TIMEOUT_MS: Int(100, 600_000, 10_000),
  MAX_HANDSHAKING_CONNECTIONS: Int(1, 1_000_000, 4096),
  HEADERS_TIMEOUT_MS: Int(100, 600_000, 30_000),
  ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  ADMIN_AUTH_MAX_FAILURES_PER_MINUTE: Int(0, 100_000, 10),
  ENCRYPTION_KEY: Type.Optional(Type.String()),
  ENCRYPTION_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  ENCRYPTION_KEY_PREVIOUS: Type.Optional(Type.String()),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  BODY_LIMIT_BYTES: Int(1024, 100 * 1024 * 1024, 1024 * 1024),
  SHUTDOWN_TIMEOUT_MS: Int(0, 600_000, 10_000),
  KEY_CACHE_TTL_MS: Int(0, 3_600_000, 10_000),
  PROVIDER_TIMEOUT_MS: Int(100, 600_000, 60_000),
  // No schema default: unset, it follows PROVIDER_TIMEOUT_MS (see requestTimeout).
  REQUEST_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
  PROVIDER_CONNECT_TIMEOUT_MS: Int(100, 60_000, 5_000),
  // Streams (docs/streaming.md): instead of PROVIDER_TIMEOUT_MS's whole-body limit.
  STREAM_FIRST_BYTE_TIMEOUT_MS: Int(100, 600_000, 60_000),
  STREAM_IDLE_TIMEOUT_MS: Int(100, 600_000, 60_000),
  STREAM_MAX_DURATION_MS: Int(1000, 86_400_000, 600_000),
  ALLOW_PRIVATE_ENDPOINTS: Type.Optional(Bool),
  BREAKER_FAILURE_THRESHOLD: Int(1, 1000, 3),
  BREAKER_COOLDOWN_MS: Int(0, 3_600_000, 30_000),
  LADDER_DEFAULT_MAX_SPEND: Type.Number({ exclusiveMinimum: 0, maximum: 50, default: 1 }),
  LADDER_MAX_NODES_PER_STEP: Int(1, 1000, 32),
  LADDER_MAX_MODEL_CALLS: Int(1, 100_000, 500),
  LADDER_MAX_RECURSION_DEPTH: Int(0, 10, 10),
  LADDER_MAX_RUN_MS: Int(1000, 86_400_000, 600_000),
  LADDER_MAX_CONCURRENT_CALLS: Int(1, 256, 8),
  LADDER_MAX_OUTPUT_TOKENS: Int(16, 1_000_000, 4096),
  UNKNOWN_MODEL_PRICE_INPUT: Type.Number({ minimum: 0, default: 10 }),
  UNKNOWN_MODEL_PRICE_OUTPUT: Type.Number({ minimum: 0, default: 30 }),
  // Quotas, usage ledger and prices (docs/quotas.md).
  PRICES_FILE: Type.Optional(Type.String({ minLength: 1 })),
  USAGE_FLUSH_MS: Int(10, 600_000, 1000),
  USAGE_FLUSH_ROWS: Int(1, 100_000, 500),
  USAGE_RAW_RETENTION_DAYS: Int(0, 36_500, 30),
  QUOTA_SHARES_PER_WINDOW: Int(1, 1000, 10),
  QUOTA_SPEND_IDLE_MS: Int(10, 3_600_000, 1000),
  PROVIDER_MAX_RESPONSE_BYTES: Int(1024, 256 * 1024 * 1024, 4 * 1024 * 1024),
  PROVIDER_MAX_EMBEDDINGS_RESPONSE_BYTES: Int(1024, 1024 * 1024 * 1024, 64 * 1024 * 1024),
  LADDER_MAX_RUN_BYTES: Int(1024, 1024 * 1024 * 1024, 32 * 1024 * 1024),
  WORKER_CONCURRENCY: Int(0, 256, 16),
  WORKER_POLL_MS: Int(50, 60_000, 1_000),
  RUN_LEASE_MS: Int(1_000, 3_600_000, 15_000),
  // No schema default: unset, 500 ms or a third of RUN_LEASE_MS if that is shorter (see cancelCheck).
  RUN_CANCEL_CHECK_MS: Type.Optional(Type.Integer({ minimum: 50, maximum: 60_000 })),
  RUN_MAX_ATTEMPTS: Int(1, 100, 3),
  INSTANCE_RETENTION_DAYS: Int(0, 36_500, 30),
  RESPONSES_RETENTION_DAYS: Int(0, 36_500, 30),
  RETENTION_INTERVAL_MS: Int(1_000, 86_400_000, 3_600_000),
  AUDIT_RETENTION_DAYS: Int(0, 36_500, 365),
  // Webhooks (docs/webhooks.md).
  WEBHOOK_CONCURRENCY: Int(0, 256, 8),
  WEBHOOK_TIMEOUT_MS: Int(100, 60_000, 10_000),
  SSE_MAX_STREAMS: Int(1, 100_000, 200),
  SSE_POLL_MS: Int(20, 60_000, 250),
  SSE_KEEPALIVE_MS: Int(100, 600_000, 15_000),
  // No schema default: unset, a quarter of SSE_MAX_STREAMS (see streamsPerAccount).
  SSE_MAX_STREAMS_PER_ACCOUNT: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  SSE_IDLE_TIMEOUT_MS: Int(100, 3_600_000, 30_000),
  // Prometheus metrics (docs/metrics.md).
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  // OpenTelemetry traces (docs/observability.md): the standard variables; the SDK reads the
  // others it knows (OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_BSP_*, OTEL_TRACES_SAMPLER...) itself.
  OTEL_SDK_DISABLED: Type.Optional(Bool),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  OTEL_EXPORTER_OTLP_PROTOCOL: Type.Optional(OtlpProtocol),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Type.Optional(OtlpProtocol),
  OTEL_CAPTURE_CONTENT: Type.Optional(Bool),
});

type Env = Static<typeof EnvSchema>;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  tls: { certFile: string; keyFile: string } | null;
  /** Extra DNS names and IP addresses for the generated certificate (beside localhost and loopback). */
  selfSignedHosts: string[];
  trustProxy: boolean;
  adminToken: string | null;
  /** Failed admin authentications one client address may make per minute before it is refused (0: unlimited). */
  adminAuthMaxFailuresPerMinute: number;
  /** base64 of 32 bytes; null means "generate once into DATA_DIR". */
  encryptionKey: string | null;
  /** Where the key is kept (and generated on first start) when ENCRYPTION_KEY is unset; default DATA_DIR/encryption.key. */
  encryptionKeyFile: string;
  /** Older keys that may still have sealed stored secrets (during a key rotation). */
  previousEncryptionKeys: string[];
  logLevel: string;
  bodyLimitBytes: number;
  shutdownTimeoutMs: number;
  /** From accepting a connection to a finished TLS handshake (or a plain request's first byte). */
  tlsHandshakeTimeoutMs: number;
  /** Connections not yet through their handshake at once; beyond it the oldest is dropped. */
  maxHandshakingConnections: number;
  /** From a request's first byte (or an idle connection's) to the end of its headers. */
  headersTimeoutMs: number;
  /** How long another node may keep honouring a revoked key (this node forgets at once). */
  keyCacheTtlMs: number;
  /** Audit log entries older than this go with the retention job; 0 keeps them (docs/accounts.md). */
  auditRetentionDays: number;
  providers: {
    timeoutMs: number;
    /** Deadline of one model call through the router, every fallback attempt together. */
    requestTimeoutMs: number;
    connectTimeoutMs: number;
    allowPrivateEndpoints: boolean;
    breakerFailureThreshold: number;
    breakerCooldownMs: number;
    /** From PROVIDER_BASE_URL_<ID>, keyed by catalog id (`azure-openai` for AZURE_OPENAI). */
    baseUrls: Record<string, string>;
    /** A larger success body is a failed attempt (vendor_response_too_large); also the largest stream event. */
    maxResponseBytes: number;
    /** The same for embeddings answers, whose 2,048 vectors are large (docs/apis.md). */
    maxEmbeddingsResponseBytes: number;
    /** Streams: time to the first chunk (per attempt), longest quiet gap, longest stream. */
    stream: { firstByteMs: number; idleMs: number; maxDurationMs: number };
  };
  ladders: {
    defaultMaxSpend: number;
    maxNodesPerStep: number;
    maxModelCallsPerRun: number;
    maxRecursionDepth: number;
    maxRunMs: number;
    maxConcurrentCalls: number;
    /** Cap on max_tokens of one ladder call; the budget may lower it. */
    maxOutputTokens: number;
    /** Output text one run may hold in memory at once (UTF-8 bytes). */
    maxRunBytes: number;
    unknownModelPrice: { input: number; output: number };
  };
  /** Quotas, usage ledger and prices (docs/quotas.md). */
  usage: {
    /** Entries of PRICES_FILE, keyed by lower-case model name; they override the built-in table. */
    priceOverrides: Record<string, ModelPrice>;
    /** The ledger writes its buffered rows this often, or sooner once it holds `flushRows`. */
    flushMs: number;
    flushRows: number;
    /** Raw ledger rows older than this are deleted by the retention job (hourly totals stay); 0 keeps them. */
    rawRetentionDays: number;
    /** A rate limit's window is handed out to processes in shares of about limit / this. */
    sharesPerWindow: number;
    /** A process gives back the unused remainder of its slice of a spend counter after this long without calls. */
    spendIdleMs: number;
  };
  /** Background runs: docs/background-runs.md. */
  worker: {
    /** Background runs this process executes at once; 0 makes it an API-only process. */
    concurrency: number;
    /** Safety-net poll for pending and abandoned instances (notices are the fast path). */
    pollMs: number;
    /** A run's lease; renewed every third of it. */
    leaseMs: number;
    /** How often local runs look for cancel requests and lost leases. */
    cancelCheckMs: number;
    /** Processes that may stop under one background run before it fails as run_interrupted. */
    maxAttempts: number;
    /** Finished instances older than this are deleted; 0 keeps them forever. */
    retentionDays: number;
    /** Stored responses (POST /v1/responses) older than this are deleted; 0 keeps them forever. */
    responsesRetentionDays: number;
    retentionIntervalMs: number;
  };
  /** Webhooks when a run ends (docs/webhooks.md). */
  webhooks: {
    /** Deliveries this process sends at once; 0, or WORKER_CONCURRENCY=0, makes it send none in the background. Default 8. */
    concurrency: number;
    /** One attempt's deadline, connection to last byte of the answer. Default 10 s. */
    timeoutMs: number;
  };
  /** Live event streams of instances (GET /v1/pipelines/instances/{id}/events). */
  events: {
    /** Streams one process serves at once; more get 503. Default 200. */
    maxStreams: number;
    /** How often a stream reads new events when no notice woke it. Default 250 ms. */
    pollMs: number;
    /** Interval of `: keep-alive` comments on a quiet stream. Default 15 s. */
    keepAliveMs: number;
    /** Streams one account may hold of maxStreams, so that one account cannot take them all. Default a quarter of maxStreams. */
    maxStreamsPerAccount: number;
    /** A client that takes nothing of a full socket buffer for this long is dropped. Default 30 s. */
    idleTimeoutMs: number;
  };
  /** Prometheus metrics (docs/metrics.md); with neither set, nothing is collected. */
  metrics: {
    /** GET /metrics on the main listener, behind `Authorization: Bearer <token>`. */
    token: string | null;
    /** A plain-HTTP listener on 127.0.0.1 serving /metrics without auth (0: any free port). */
    port: number | null;
  };
  /** OpenTelemetry traces (docs/observability.md); null: off, and no OpenTelemetry module is loaded. */
  telemetry: TelemetrySettings | null;
}

export interface TelemetrySettings {
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL; default http/protobuf. */
  protocol: 'http/protobuf' | 'http/json';
  /** OTEL_CAPTURE_CONTENT: prompts, outputs, run inputs and answers go into spans. Default false. */
  captureContent: boolean;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const BASE_URL_PREFIX = 'PROVIDER_BASE_URL_';
/** Settings that may instead be read from a file named by `<NAME>_FILE` (Docker secrets). */
const FILE_SETTINGS = ['DATABASE_URL', 'ADMIN_TOKEN'];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = { ...fromFiles(env), ...pickDefined(env, Object.keys(EnvSchema.properties)) };
  const parsed = parseEnv(EnvSchema, raw);
  return {
    port: parsed.PORT,
    host: parsed.HOST,
    dataDir: parsed.DATA_DIR,
    databaseUrl: parsed.DATABASE_URL ?? null,
    tls: tlsFiles(parsed),
    selfSignedHosts: (parsed.TLS_SELF_SIGNED_HOSTS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    trustProxy: isTrue(parsed.TRUST_PROXY),
    adminToken: parsed.ADMIN_TOKEN ?? null,
    adminAuthMaxFailuresPerMinute: parsed.ADMIN_AUTH_MAX_FAILURES_PER_MINUTE,
    encryptionKey: parsed.ENCRYPTION_KEY ?? null,
    encryptionKeyFile: encryptionKeyFile(parsed),
    previousEncryptionKeys: (parsed.ENCRYPTION_KEY_PREVIOUS ?? '').split(',').map((k) => k.trim()).filter(Boolean),
    logLevel: parsed.LOG_LEVEL,
    bodyLimitBytes: parsed.BODY_LIMIT_BYTES,
    shutdownTimeoutMs: parsed.SHUTDOWN_TIMEOUT_MS,
    tlsHandshakeTimeoutMs: parsed.TLS_HANDSHAKE_TIMEOUT_MS,
    maxHandshakingConnections: parsed.MAX_HANDSHAKING_CONNECTIONS,
    headersTimeoutMs: parsed.HEADERS_TIMEOUT_MS,
    keyCacheTtlMs: parsed.KEY_CACHE_TTL_MS,
    auditRetentionDays: parsed.AUDIT_RETENTION_DAYS,
    providers: {
      timeoutMs: parsed.PROVIDER_TIMEOUT_MS,
      requestTimeoutMs: requestTimeout(parsed),
      connectTimeoutMs: parsed.PROVIDER_CONNECT_TIMEOUT_MS,
      allowPrivateEndpoints: isTrue(parsed.ALLOW_PRIVATE_ENDPOINTS),
      breakerFailureThreshold: parsed.BREAKER_FAILURE_THRESHOLD,
      breakerCooldownMs: parsed.BREAKER_COOLDOWN_MS,
      baseUrls: providerBaseUrls(env),
      maxResponseBytes: parsed.PROVIDER_MAX_RESPONSE_BYTES,
      maxEmbeddingsResponseBytes: parsed.PROVIDER_MAX_EMBEDDINGS_RESPONSE_BYTES,
      stream: { firstByteMs: parsed.STREAM_FIRST_BYTE_TIMEOUT_MS, idleMs: parsed.STREAM_IDLE_TIMEOUT_MS, maxDurationMs: parsed.STREAM_MAX_DURATION_MS },
    },
    ladders: {
      defaultMaxSpend: parsed.LADDER_DEFAULT_MAX_SPEND,
      maxNodesPerStep: parsed.LADDER_MAX_NODES_PER_STEP,
      maxModelCallsPerRun: parsed.LADDER_MAX_MODEL_CALLS,
      maxRecursionDepth: parsed.LADDER_MAX_RECURSION_DEPTH,
      maxRunMs: parsed.LADDER_MAX_RUN_MS,
      maxConcurrentCalls: parsed.LADDER_MAX_CONCURRENT_CALLS,
      maxOutputTokens: parsed.LADDER_MAX_OUTPUT_TOKENS,
      maxRunBytes: parsed.LADDER_MAX_RUN_BYTES,
      unknownModelPrice: { input: parsed.UNKNOWN_MODEL_PRICE_INPUT, output: parsed.UNKNOWN_MODEL_PRICE_OUTPUT },
    },
    usage: {
      priceOverrides: parsed.PRICES_FILE ? priceOverrides(parsed.PRICES_FILE) : {},
      flushMs: parsed.USAGE_FLUSH_MS,
      flushRows: parsed.USAGE_FLUSH_ROWS,
      rawRetentionDays: parsed.USAGE_RAW_RETENTION_DAYS,
      sharesPerWindow: parsed.QUOTA_SHARES_PER_WINDOW,
      spendIdleMs: parsed.QUOTA_SPEND_IDLE_MS,
    },
    worker: {
      concurrency: parsed.WORKER_CONCURRENCY,
      pollMs: parsed.WORKER_POLL_MS,
      leaseMs: parsed.RUN_LEASE_MS,
      cancelCheckMs: cancelCheck(parsed),
      maxAttempts: parsed.RUN_MAX_ATTEMPTS,
      retentionDays: parsed.INSTANCE_RETENTION_DAYS,
      responsesRetentionDays: parsed.RESPONSES_RETENTION_DAYS,
      retentionIntervalMs: parsed.RETENTION_INTERVAL_MS,
    },
    webhooks: { concurrency: parsed.WEBHOOK_CONCURRENCY, timeoutMs: parsed.WEBHOOK_TIMEOUT_MS },
    events: {
      maxStreams: parsed.SSE_MAX_STREAMS,
      pollMs: parsed.SSE_POLL_MS,
      keepAliveMs: parsed.SSE_KEEPALIVE_MS,
      maxStreamsPerAccount: parsed.SSE_MAX_STREAMS_PER_ACCOUNT ?? Math.max(1, Math.ceil(parsed.SSE_MAX_STREAMS / 4)),
      idleTimeoutMs: parsed.SSE_IDLE_TIMEOUT_MS,
    },
    metrics: metricsSettings(parsed),
    telemetry: telemetrySettings(parsed),
  };
}

/** On when an OTLP endpoint is set and OTEL_SDK_DISABLED is not true (the specification's switch). */
function telemetrySettings(env: Env): Config['telemetry'] {
  if (isTrue(env.OTEL_SDK_DISABLED)) return null;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return null;
  return {
    protocol: env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    captureContent: isTrue(env.OTEL_CAPTURE_CONTENT),
  };
}

function metricsSettings(env: Env): Config['metrics'] {
  const port = env.METRICS_PORT ?? null;
  if (port !== null && port !== 0 && port === env.PORT) {
    throw new ConfigError(`Invalid configuration:\n  METRICS_PORT=${port}: must differ from PORT`);
  }
  return { token: env.METRICS_TOKEN ?? null, port };
}

function priceOverrides(file: string): Record<string, ModelPrice> {
  try {
    return loadPricesFile(file);
  } catch (error) {
    if (error instanceof PricesFileError) throw new ConfigError(`Invalid configuration:\n  PRICES_FILE=${JSON.stringify(file)}: ${error.message}`);
    throw error;
  }
}

function pickDefined(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    // An empty variable means "not set", as in most twelve-factor services.
    if (value !== undefined && value !== '') out[name] = value;
  }
  return out;
}

/** `DATABASE_URL_FILE=/run/secrets/database_url`: the file's content, when the variable itself is unset. */
function fromFiles(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of FILE_SETTINGS) {
    const file = env[`${name}_FILE`];
    if (!file || env[name]) continue;
    try {
      out[name] = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new ConfigError(`Invalid configuration:\n  ${name}_FILE=${JSON.stringify(file)}: cannot be read (${(error as NodeJS.ErrnoException).code})`);
    }
  }
  return out;
}

function parseEnv<T extends TSchema>(schema: T, raw: Record<string, string>): Static<T> {
  const withDefaults = Value.Default(schema, Value.Convert(schema, { ...raw }));
  const problems = [...Value.Errors(schema, withDefaults)].map((e) => {
    const name = e.path.replace(/^\//, '');
    const shown = name === 'ADMIN_TOKEN' || name === 'METRICS_TOKEN' || name.startsWith('ENCRYPTION_KEY') ? '(hidden)' : JSON.stringify(raw[name]);
    return `${name}=${shown}: ${describe(e.schema, e.message)}`;
  });
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  return withDefaults as Static<T>;
}

function describe(schema: TSchema, fallback: string): string {
  if (schema.type === 'integer') return `must be a whole number from ${schema.minimum} to ${schema.maximum}`;
  if (schema.anyOf) return `must be one of ${schema.anyOf.map((s: TSchema) => s.const).join(', ')}`;
  if (schema.pattern === '^postgres(ql)?://') return 'must be a postgres:// or postgresql:// URL';
  if (schema.pattern === '^https?://') return 'must be an http:// or https:// URL';
  if (schema.minLength === 16) return 'must be at least 16 characters long';
  return fallback.toLowerCase();
}

function isTrue(flag: string | undefined): boolean {
  return flag === 'true' || flag === '1';
}

const DEFAULT_CANCEL_CHECK_MS = 500;

/**
 * A lease is renewed only at a check, and a run whose lease went unrenewed for all of
 * RUN_LEASE_MS stops (another process may have taken it over): a check at most every third of
 * the lease leaves two more chances when one renewal comes late. Unset: 500 ms, or a third of
 * the lease when that is shorter. Set longer than a third: refused.
 */
function cancelCheck(env: Env): number {
  const third = Math.floor(env.RUN_LEASE_MS / 3);
  const set = env.RUN_CANCEL_CHECK_MS;
  if (set === undefined) return Math.min(DEFAULT_CANCEL_CHECK_MS, third);
  if (set > third) {
    throw new ConfigError(
      `Invalid configuration:\n  RUN_CANCEL_CHECK_MS=${JSON.stringify(String(set))}: must be at most a third of RUN_LEASE_MS (${third}), so that a late renewal still leaves time for the next before the lease runs out`,
    );
  }
  return set;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

/** Unset: 120 s, or PROVIDER_TIMEOUT_MS when that is longer. Set: never below PROVIDER_TIMEOUT_MS. */
function requestTimeout(env: Env): number {
  const attempt = env.PROVIDER_TIMEOUT_MS;
  const set = env.REQUEST_TIMEOUT_MS;
  if (set === undefined) return Math.max(DEFAULT_REQUEST_TIMEOUT_MS, attempt);
  if (set < attempt) {
    throw new ConfigError(
      `Invalid configuration:\n  REQUEST_TIMEOUT_MS=${JSON.stringify(String(set))}: must be at least PROVIDER_TIMEOUT_MS (${attempt}), so that one attempt can use its full time`,
    );
  }
  return set;
}

function tlsFiles(env: Env): Config['tls'] {
  const { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } = env;
  if (!certFile && !keyFile) return null;
  if (!certFile || !keyFile) {
    throw new ConfigError('Invalid configuration:\n  TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  return { certFile, keyFile };
}

function encryptionKeyFile(env: Env): string {
  if (env.ENCRYPTION_KEY && env.ENCRYPTION_KEY_FILE) {
    throw new ConfigError('Invalid configuration:\n  ENCRYPTION_KEY and ENCRYPTION_KEY_FILE: set one of them, not both');
  }
  return env.ENCRYPTION_KEY_FILE ?? path.join(env.DATA_DIR, 'encryption.key');
}

function providerBaseUrls(env: NodeJS.ProcessEnv): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(BASE_URL_PREFIX) || !value) continue;
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
      throw new ConfigError(`Invalid configuration:\n  ${name}=${JSON.stringify(value)}: must be an http(s) URL`);
    }
    const id = name.slice(BASE_URL_PREFIX.length).toLowerCase().replaceAll('_', '-');
    urls[id] = value.replace(/\/+$/, '');
  }
  return urls;
}
