import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

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
      encryptionKey: null,
      logLevel: 'info',
      bodyLimitBytes: 1024 * 1024,
      keyCacheTtlMs: 10_000,
    });
    expect(config.providers).toEqual({
      timeoutMs: 60_000,
      connectTimeoutMs: 5_000,
      allowPrivateEndpoints: false,
      breakerFailureThreshold: 3,
      breakerCooldownMs: 30_000,
      baseUrls: {},
    });
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
      logLevel: 'warn',
    });
    expect(config.providers.allowPrivateEndpoints).toBe(true);
    expect(config.providers.baseUrls).toEqual({
      openai: 'http://127.0.0.1:9000/v1',
      'azure-openai': 'https://proxy.internal/azure',
    });
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
    [{ METRICS_TOKEN: 'short-metrics' }, 'METRICS_TOKEN=(hidden): must be at least 16 characters long'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT="70000": must be a whole number from 0 to 65535'],
    [{ PORT: '9464', METRICS_PORT: '9464' }, 'METRICS_PORT=9464: must differ from PORT'],
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

  it('reads the metrics settings: off by default, a token, a local port', () => {
    expect(loadConfig({}).metrics).toEqual({ token: null, port: null });
    expect(loadConfig({ METRICS_TOKEN: 'metrics-token-0123456789', METRICS_PORT: '9464' }).metrics).toEqual({ token: 'metrics-token-0123456789', port: 9464 });
    expect(loadConfig({ METRICS_PORT: '0' }).metrics.port).toBe(0);
  });
});
