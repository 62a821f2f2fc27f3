import { describe, expect, it } from 'vitest';
import { build } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

describe('health and readiness', () => {
  it('report alive and ready while the database answers, and 503 once it does not', async () => {
    const database = await openTestDatabase();
    const t = await build({}, { database });
    try {
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
      expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });

      await database.close();
      const notReady = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(notReady.statusCode).toBe(503);
      expect(notReady.json()).toEqual({
        error: { message: 'The database is not reachable.', type: 'api_error', code: 'database_unavailable', param: null },
      });
      // Liveness does not depend on the database: a restart would not fix it.
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
