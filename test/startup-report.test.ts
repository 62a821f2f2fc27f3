// The start-up report's database line, for every form of DATABASE_URL node-postgres accepts.
// A Unix socket's `postgres://user@/db?host=...` is no WHATWG URL: reading it as one stopped the
// server at start with "Invalid URL".
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startupReport } from '../src/startup-report.js';

const databaseLine = (databaseUrl: string) =>
  startupReport(loadConfig({ DATA_DIR: '/srv/ladder', DATABASE_URL: databaseUrl, ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') }), null)[0];

describe('the start-up report names the database', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('by host, port and name, without the user name or password', () => {
    expect(databaseLine('postgres://ladder:s3cret-pw@db.example.com:6543/ladder')).toBe('database: PostgreSQL at db.example.com:6543/ladder (DATABASE_URL)');
    expect(databaseLine('postgresql://ladder@127.0.0.1/ladder?application_name=ladder')).toBe('database: PostgreSQL at 127.0.0.1/ladder (DATABASE_URL)');
    expect(databaseLine('postgres://ladder:pw@[::1]:5432/ladder')).toBe('database: PostgreSQL at [::1]:5432/ladder (DATABASE_URL)');
  });

  it('through a Unix socket, however the string names it', () => {
    const expected = 'database: PostgreSQL through the Unix socket in /var/run/postgresql, database ladder (DATABASE_URL)';
    expect(databaseLine('postgres://ladder:s3cret-pw@/ladder?host=/var/run/postgresql')).toBe(expected);
    expect(databaseLine('postgres:///ladder?host=/var/run/postgresql')).toBe(expected);
    expect(databaseLine('postgres://%2Fvar%2Frun%2Fpostgresql/ladder')).toBe(expected);
  });

  it("by the driver's defaults (PGHOST, PGPORT, PGDATABASE) where the string names none", () => {
    vi.stubEnv('PGHOST', '');
    vi.stubEnv('PGPORT', '');
    vi.stubEnv('PGDATABASE', '');
    expect(databaseLine('postgres:///ladder')).toBe('database: PostgreSQL at localhost/ladder (DATABASE_URL)');
    vi.stubEnv('PGHOST', '/run/postgresql');
    expect(databaseLine('postgres:///ladder')).toBe('database: PostgreSQL through the Unix socket in /run/postgresql, database ladder (DATABASE_URL)');
    vi.stubEnv('PGHOST', 'db.internal');
    vi.stubEnv('PGPORT', '6543');
    vi.stubEnv('PGDATABASE', 'ladder_prod');
    expect(databaseLine('postgres://ladder@/')).toBe('database: PostgreSQL at db.internal:6543/ladder_prod (DATABASE_URL)');
  });

  it('without failing on a string its driver cannot read, and without repeating it', () => {
    const line = databaseLine('postgres://ladder:s3cret-pw@[bad/ladder');
    expect(line).toBe('database: PostgreSQL (a connection string its driver cannot read) (DATABASE_URL)');
    expect(line).not.toContain('s3cret');
  });
});
