// The lines an operator reads first, after Fastify's "Server listening at <url>": which
// database is in use, where the certificate and encryption key are, whether the admin API is on.
import path from 'node:path';
import { parse } from 'pg-connection-string';
import type { Config } from './config.js';
import { describeEncryptionKey, type TlsMaterial } from './crypto/data-dir-secrets.js';

export function startupReport(config: Config, tls: TlsMaterial | null): string[] {
  return [
    `database: ${describeDatabase(config)}`,
    tls ? `TLS certificate: ${describeTls(config, tls)}` : 'TLS: off, plain HTTP behind a TLS-terminating proxy (TRUST_PROXY)',
    `encryption key for stored provider keys: ${describeEncryptionKey(config)}`,
    config.adminToken ? 'admin API: on (ADMIN_TOKEN is set)' : 'admin API: off (ADMIN_TOKEN is not set; /v1/admin/* answers 404)',
  ];
}

function describeDatabase(config: Config): string {
  if (!config.databaseUrl) return `embedded PostgreSQL (PGlite) in ${path.resolve(config.dataDir, 'pgdata')}`;
  return `${describePostgres(config.databaseUrl)} (DATABASE_URL)`;
}

/**
 * Where a connection string points, read as node-postgres reads it (a WHATWG URL refuses some it
 * accepts, such as a Unix socket's `postgres://user@/db?host=/run/postgresql`); never its user
 * name or password. One the parser refuses is reported as such: the connection will say why.
 */
function describePostgres(databaseUrl: string): string {
  let target: ReturnType<typeof parse>;
  try {
    target = parse(databaseUrl);
  } catch {
    return 'PostgreSQL (a connection string its driver cannot read)';
  }
  // Where the string is silent, the driver falls back on the PG* variables (PGHOST, else localhost).
  const host = target.host || process.env.PGHOST || 'localhost';
  const port = target.port || process.env.PGPORT;
  const name = target.database || process.env.PGDATABASE;
  if (host.startsWith('/')) return `PostgreSQL through the Unix socket in ${host}${name ? `, database ${name}` : ''}`;
  return `PostgreSQL at ${host.includes(':') ? `[${host}]` : host}${port ? `:${port}` : ''}/${name ?? ''}`;
}

function describeTls(config: Config, tls: TlsMaterial): string {
  if (!tls.generated) return `${tls.certFile} (TLS_CERT_FILE), key ${tls.keyFile} (TLS_KEY_FILE)`;
  const names = ['localhost', '127.0.0.1', '::1', ...config.selfSignedHosts].join(', ');
  return `${path.resolve(tls.certFile)}, self-signed for ${names} (trust this file in clients; key beside it)`;
}
