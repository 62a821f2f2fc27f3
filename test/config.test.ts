import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ConfigError, EnvSchema, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('applies the documented defaults on an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8443,
      host: '127.0.0.1',
      dataDir: './data',
      databaseUrl: null,
      tls: null,
      trustProxy: false,
      adminToken: null,
      adminAuthMaxFailuresPerMinute: 10,
      encryptionKey: null,
      logLevel: 'info',
      bodyLimitBytes: 1024 * 1024,
      keyCacheTtlMs: 10_000,
    });
    expect(config.providers).toEqual({
      timeoutMs: 60_000,
      requestTimeoutMs: 120_000,
      connectTimeoutMs: 5_000,
      allowPrivateEndpoints: false,
      breakerFailureThreshold: 3,
      breakerCooldownMs: 30_000,
      baseUrls: {},
      maxResponseBytes: 4 * 1024 * 1024,
      maxEmbeddingsResponseBytes: 64 * 1024 * 1024,
      stream: { firstByteMs: 60_000, idleMs: 60_000, maxDurationMs: 600_000 },
    });
    expect(config.ladders.maxRunBytes).toBe(32 * 1024 * 1024);
    expect(config.worker).toEqual({
      concurrency: 16,
      pollMs: 1_000,
      leaseMs: 15_000,
      cancelCheckMs: 500,
      maxAttempts: 3,
      retentionDays: 30,
      responsesRetentionDays: 30,
      retentionIntervalMs: 3_600_000,
    });
    expect(config.events).toEqual({ maxStreams: 200, pollMs: 250, keepAliveMs: 15_000, maxStreamsPerAccount: 50, idleTimeoutMs: 30_000 });
  });

  it('reads the event-stream settings and refuses a bad one by name', () => {
    expect(loadConfig({ SSE_MAX_STREAMS: '5', SSE_POLL_MS: '100', SSE_KEEPALIVE_MS: '2000' }).events).toEqual({
      maxStreams: 5, pollMs: 100, keepAliveMs: 2000, maxStreamsPerAccount: 2, idleTimeoutMs: 30_000,
    });
    // Unset, an account's share is a quarter of the streams (rounded up, at least one).
    expect(loadConfig({ SSE_MAX_STREAMS: '1' }).events.maxStreamsPerAccount).toBe(1);
    expect(loadConfig({ SSE_MAX_STREAMS: '10', SSE_MAX_STREAMS_PER_ACCOUNT: '7', SSE_IDLE_TIMEOUT_MS: '500' }).events).toMatchObject({ maxStreamsPerAccount: 7, idleTimeoutMs: 500 });
    expect(() => loadConfig({ SSE_MAX_STREAMS_PER_ACCOUNT: '0' })).toThrow(/SSE_MAX_STREAMS_PER_ACCOUNT="0"/);
    expect(() => loadConfig({ SSE_IDLE_TIMEOUT_MS: '99' })).toThrow(/SSE_IDLE_TIMEOUT_MS="99"/);
    expect(() => loadConfig({ SSE_MAX_STREAMS: '0' })).toThrow(/SSE_MAX_STREAMS="0": must be a whole number from 1 to 100000/);
  });

  it('reads every setting it is given', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATA_DIR: '/var/lib/ladder',
      DATABASE_URL: 'postgres://u@db:5432/ladder',
      TLS_CERT_FILE: '/c.pem',
      TLS_KEY_FILE: '/k.pem',
      TRUST_PROXY: 'true',
      ADMIN_TOKEN: 'a-very-long-admin-token',
      ADMIN_AUTH_MAX_FAILURES_PER_MINUTE: '3',
      LOG_LEVEL: 'warn',
      ALLOW_PRIVATE_ENDPOINTS: '1',
      PROVIDER_BASE_URL_OPENAI: 'http://127.0.0.1:9000/v1/',
      PROVIDER_BASE_URL_AZURE_OPENAI: 'https://proxy.internal/azure',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      dataDir: '/var/lib/ladder',
      databaseUrl: 'postgres://u@db:5432/ladder',
      tls: { certFile: '/c.pem', keyFile: '/k.pem' },
      trustProxy: true,
      adminToken: 'a-very-long-admin-token',
      adminAuthMaxFailuresPerMinute: 3,
      logLevel: 'warn',
    });
    expect(config.providers.allowPrivateEndpoints).toBe(true);
    expect(config.providers.baseUrls).toEqual({
      openai: 'http://127.0.0.1:9000/v1',
      'azure-openai': 'https://proxy.internal/azure',
    });
  });

  it('gives a call a deadline of 120 s, or PROVIDER_TIMEOUT_MS when longer, unless set', () => {
    expect(loadConfig({ PROVIDER_TIMEOUT_MS: '300000' }).providers.requestTimeoutMs).toBe(300_000);
    expect(loadConfig({ PROVIDER_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2500' }).providers.requestTimeoutMs).toBe(2500);
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '60000' }).providers.requestTimeoutMs).toBe(60_000);
  });

  it('checks runs every 500 ms, or every third of a lease shorter than 1.5 s, unless told', () => {
    const check = (env: Record<string, string>) => loadConfig(env).worker.cancelCheckMs;
    expect(check({ RUN_LEASE_MS: '1500' })).toBe(500);
    expect(check({ RUN_LEASE_MS: '1000' })).toBe(333);
    expect(check({ RUN_LEASE_MS: '1000', RUN_CANCEL_CHECK_MS: '333' })).toBe(333);
    expect(check({ RUN_LEASE_MS: '60000', RUN_CANCEL_CHECK_MS: '20000' })).toBe(20_000);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' })).toMatchObject({ port: 8443, databaseUrl: null });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT="eighty": must be a whole number from 0 to 65535'],
    [{ PORT: '70000' }, 'PORT="70000": must be a whole number from 0 to 65535'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud": must be one of fatal, error, warn, info, debug, trace, silent'],
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY="yes": must be one of true, false, 1, 0'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL="mysql://x": must be a postgres:// or postgresql:// URL'],
    [{ ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN=(hidden): must be at least 16 characters long'],
    [{ TLS_CERT_FILE: '/c.pem' }, 'TLS_CERT_FILE and TLS_KEY_FILE must be set together'],
    [{ PROVIDER_BASE_URL_OPENAI: 'ftp://x' }, 'PROVIDER_BASE_URL_OPENAI="ftp://x": must be an http(s) URL'],
    [{ REQUEST_TIMEOUT_MS: '50' }, 'REQUEST_TIMEOUT_MS="50": must be a whole number from 100 to 3600000'],
    [{ REQUEST_TIMEOUT_MS: '30000' }, 'REQUEST_TIMEOUT_MS="30000": must be at least PROVIDER_TIMEOUT_MS (60000), so that one attempt can use its full time'],
    [{ PROVIDER_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '4999' }, 'REQUEST_TIMEOUT_MS="4999": must be at least PROVIDER_TIMEOUT_MS (5000)'],
    [{ WORKER_CONCURRENCY: '-1' }, 'WORKER_CONCURRENCY="-1": must be a whole number from 0 to 256'],
    [{ RUN_LEASE_MS: '10' }, 'RUN_LEASE_MS="10": must be a whole number from 1000 to 3600000'],
    [{ RUN_LEASE_MS: '1000', RUN_CANCEL_CHECK_MS: '500' }, 'RUN_CANCEL_CHECK_MS="500": must be at most a third of RUN_LEASE_MS (333), so that a late renewal still leaves time for the next before the lease runs out'],
    [{ RUN_CANCEL_CHECK_MS: '5001' }, 'RUN_CANCEL_CHECK_MS="5001": must be at most a third of RUN_LEASE_MS (5000)'],
    [{ RUN_CANCEL_CHECK_MS: '10' }, 'RUN_CANCEL_CHECK_MS="10": must be a whole number from 50 to 60000'],
    [{ METRICS_TOKEN: 'short-metrics' }, 'METRICS_TOKEN=(hidden): must be at least 16 characters long'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT="70000": must be a whole number from 0 to 65535'],
    [{ PORT: '9464', METRICS_PORT: '9464' }, 'METRICS_PORT=9464: must differ from PORT'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '127.0.0.1:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT="127.0.0.1:4318": must be an http:// or https:// URL'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL="grpc": must be one of http/protobuf, http/json'],
    [{ OTEL_SDK_DISABLED: 'yes' }, 'OTEL_SDK_DISABLED="yes": must be one of true, false, 1, 0'],
  ])('stops the boot naming the bad setting %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reports every bad setting at once, and never echoes a secret', () => {
    let message = '';
    try {
      loadConfig({ PORT: '-1', HOST: '', ADMIN_TOKEN: 'tiny-secret' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('PORT="-1"');
    expect(message).toContain('ADMIN_TOKEN=(hidden)');
    expect(message).not.toContain('tiny-secret');
  });

  it('reads the trace settings: off without an endpoint or with OTEL_SDK_DISABLED, protobuf unless told', () => {
    expect(loadConfig({}).telemetry).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_CAPTURE_CONTENT: 'true' }).telemetry).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }).telemetry).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).telemetry).toEqual({ protocol: 'http/protobuf', captureContent: false });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otel.example/v1/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_CAPTURE_CONTENT: '1' }).telemetry)
      .toEqual({ protocol: 'http/json', captureContent: true });
  });

  it('reads the metrics settings: off by default, a token, a local port', () => {
    expect(loadConfig({}).metrics).toEqual({ token: null, port: null });
    expect(loadConfig({ METRICS_TOKEN: 'metrics-token-0123456789', METRICS_PORT: '9464' }).metrics).toEqual({ token: 'metrics-token-0123456789', port: 9464 });
    expect(loadConfig({ METRICS_PORT: '0' }).metrics.port).toBe(0);
  });
});

describe('the documented settings', () => {
  const example = readFileSync(new URL('../.env.example', import.meta.url), 'utf8');
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const settings = Object.entries(EnvSchema.properties as Record<string, { default?: unknown }>);

  it('.env.example lists every setting, with the default the service uses', () => {
    for (const [name, schema] of settings) {
      const line = example.split('\n').find((l) => l.startsWith(`# ${name}=`));
      expect(line, name).toBeDefined();
      const shown = line!.slice(`# ${name}=`.length).split(/\s+#/)[0]!.trim();
      // Without a schema default the line shows the derived one (false, a path under DATA_DIR) or nothing.
      if (schema.default !== undefined) expect(shown, name).toBe(String(schema.default));
    }
  });

  it('README names every setting', () => {
    for (const [name] of settings) expect(readme, name).toContain(`\`${name}\``);
  });
});
