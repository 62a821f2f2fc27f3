// Which failures mean "the database is not there" (503, retry) rather than a failed statement.
import { createServer, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it('is true for a server nobody listens on, as node-postgres reports it', async () => {
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    probe.close();
    await once(probe, 'close');
    const pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` });
    const error = await pool.query('select 1').catch((e: unknown) => e);
    await pool.end();
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it('looks through wrappers (drizzle puts the driver error in `cause`)', () => {
    const wrapped = new Error('Failed query: select 1', { cause: withCode('terminating connection due to administrator command', '57P01') });
    expect(isDatabaseUnavailable(wrapped)).toBe(true);
    expect(isDatabaseUnavailable(new Error('x', { cause: new Error('PGlite is closed') }))).toBe(true);
    expect(isDatabaseUnavailable(withCode('too many clients already', '53300'))).toBe(true);
    expect(isDatabaseUnavailable(withCode('connection failure', '08006'))).toBe(true);
  });

  it('is false for errors of the statement or the data', () => {
    expect(isDatabaseUnavailable(withCode('duplicate key value violates unique constraint', '23505'))).toBe(false);
    expect(isDatabaseUnavailable(withCode('invalid byte sequence for encoding "UTF8": 0x00', '22021'))).toBe(false);
    expect(isDatabaseUnavailable(new Error('something else'))).toBe(false);
    expect(isDatabaseUnavailable('PGlite is closed')).toBe(false);
  });
});
