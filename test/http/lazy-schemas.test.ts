// Route schemas are compiled on first use (src/http/lazy-schemas.ts): none at start,
// the same answers as when compiled at start, and every schema of the API compiles.
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import app from '../../src/app.js';
import { createLazyCompilers } from '../../src/http/lazy-schemas.js';
import { fastifyOptions } from '../../src/server-options.js';
import { ADMIN_TOKEN, testConfig } from '../helpers/build.js';
import { openTestDatabase } from '../helpers/database.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** The app with lazily compiled schemas, or with Fastify's own compilers that compile all at start. */
async function appWith(lazy: ReturnType<typeof createLazyCompilers> | null) {
  const config = testConfig();
  const database = await openTestDatabase();
  const fastify = Fastify({ ...fastifyOptions(config), schemaController: lazy ? { compilersFactory: lazy.factories } : undefined });
  await fastify.register(app, { config, database });
  await fastify.ready();
  closers.push(async () => {
    await fastify.close();
    await database.close();
  });
  return fastify;
}

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const requests = [
  { method: 'POST' as const, url: '/v1/admin/accounts', headers: admin, payload: { username: 7 } },
  { method: 'POST' as const, url: '/v1/admin/accounts', headers: admin, payload: { username: 'ok-name', extra: true } },
  { method: 'GET' as const, url: '/v1/admin/accounts?limit=abc', headers: admin },
  { method: 'GET' as const, url: '/v1/admin/accounts?limit=2', headers: admin },
  { method: 'GET' as const, url: '/healthz' },
];

describe('lazily compiled route schemas', () => {
  it('compiles every schema of the API without error, none of them before it is used', async () => {
    const lazy = createLazyCompilers();
    await appWith(lazy);
    // Hundreds: every route's body, params, querystring and a serializer per response status.
    expect(lazy.compilePending()).toBeGreaterThan(300);
    expect(lazy.compilePending()).toBe(0);
  }, 90_000); // compiling the whole API at once is the 2 s of CPU start-up no longer pays

  it('answers as the schemas compiled at start do, validation errors included', async () => {
    const lazy = createLazyCompilers();
    const [lazily, eagerly] = [await appWith(lazy), await appWith(null)];
    for (const request of requests) {
      const [a, b] = [await lazily.inject(request), await eagerly.inject(request)];
      expect({ url: request.url, status: a.statusCode, body: a.body }).toEqual({ url: request.url, status: b.statusCode, body: b.body });
    }
  }, 90_000);
});
