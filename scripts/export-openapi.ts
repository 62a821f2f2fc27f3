// `npm run lint:openapi`: writes the OpenAPI document, as GET /v1/openapi.json serves it (with the
// admin routes), to dist/openapi.json or the path given, for `redocly lint` to check. The app runs
// in-process on a throwaway in-memory database, with no worker and no listener.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import app from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { OPENAPI_PATH } from '../src/plugins/openapi.js';
import { fastifyOptions } from '../src/server-options.js';

const OUT = path.resolve(process.argv[2] ?? 'dist/openapi.json');

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-openapi-'));
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'export-openapi-admin-token-0123', LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '0' });
  const database = await openDatabase({ url: null, dataDir: null });
  const fastify = Fastify(fastifyOptions(config));
  try {
    await fastify.register(app, { config, database });
    const res = await fastify.inject({ method: 'GET', url: OPENAPI_PATH });
    if (res.statusCode !== 200) throw new Error(`GET ${OPENAPI_PATH}: ${res.statusCode} ${res.body}`);
    writeFileSync(OUT, `${JSON.stringify(res.json(), null, 2)}\n`);
    console.log(`wrote ${path.relative(process.cwd(), OUT)}`);
  } finally {
    await fastify.close();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
