import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, build } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

describe('health and readiness', () => {
  it('report alive and ready while the database answers, and 503 once it does not', async () => {
    const database = await openTestDatabase();
    const t = await build({}, { database });
    try {
      // Serialized as they are (no route serializer), in exactly the form the schemas give.
      for (const [url, body] of [['/healthz', '{"status":"ok"}'], ['/readyz', '{"status":"ready"}']] as const) {
        const res = await t.app.inject({ method: 'GET', url });
        expect({ status: res.statusCode, type: res.headers['content-type'], body: res.body }).toEqual({ status: 200, type: 'application/json; charset=utf-8', body });
      }

      await database.close();
      const notReady = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(notReady.statusCode).toBe(503);
      const unavailable = { error: { message: 'The database is not reachable; retry the request.', type: 'api_error', code: 'database_unavailable', param: null } };
      expect(notReady.json()).toEqual(unavailable);
      expect(notReady.headers['retry-after']).toBe('1');
      // Any request that needs the database gets the same retryable 503, never a 500.
      const listing = await t.app.inject({ method: 'GET', url: '/v1/admin/accounts/nobody/api-keys', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(listing.statusCode).toBe(503);
      expect(listing.json()).toEqual(unavailable);
      const unknownKey = await t.app.inject({ method: 'GET', url: '/v1/providers', headers: { authorization: 'Bearer ldr_live_abcdefgh_0123456789012345678901234567890123456789abc' } });
      expect(unknownKey.statusCode).toBe(503);
      expect(unknownKey.json()).toEqual(unavailable);
      // Liveness does not depend on the database: a restart would not fix it.
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
