#!/usr/bin/env node
// Bundles the server into dist/server/: server.js (what `npm start` and the Docker image run),
// pglite-thread-entry.js (where the embedded database's thread starts; the database client finds
// it beside itself) and the chunks both import. A start spent ~550 ms of its main thread loading
// ~600 modules one file at a time (TypeBox alone is 266 files, undici 110, Ajv 88); a few bundled
// files load in a fraction of that (docs/performance.md). Left out, and loaded from
// node_modules as before: packages that read files beside their own code (PGlite's WebAssembly,
// Swagger UI's assets), the compilers that src/http/lazy-schemas.ts takes from Fastify's own
// dependencies (one copy, not two), and what only some configurations load (pg, prom-client,
// OpenTelemetry's API and SDK). The tests run the sources; the tests that spawn the server run
// this bundle.
//
// Split at the sources' dynamic imports: what server.ts imports only when it needs it (the HTTP
// stack, the PostgreSQL driver, metrics, tracing) goes into chunks of its own, loaded then. One
// file evaluated all of it, and every package it imports from node_modules, before server.ts's
// first line: 500-700 ms on a slow machine before the embedded database's thread (the longest
// part of a start) was even spawned, where the split entry spawns it at 150-200 ms.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const outdir = path.join(root, 'dist', 'server');

// drizzle-orm's PGlite driver imports PGlite's whole package for two names; in the bundle it gets
// them from src/db/drizzle-pglite-imports.ts, so that only the database's thread loads PGlite.
const drizzlePgliteImports = {
  name: 'drizzle-pglite-imports',
  setup(bundler) {
    bundler.onResolve({ filter: /^@electric-sql\/pglite$/ }, ({ importer }) =>
      /[\\/]drizzle-orm[\\/]pglite[\\/]/.test(importer) ? { path: path.join(root, 'src', 'db', 'drizzle-pglite-imports.ts') } : undefined,
    );
  },
};

// Chunks are named by their content: an earlier build's would stay beside the new ones.
rmSync(outdir, { recursive: true, force: true });

await build({
  entryPoints: { server: path.join(root, 'src', 'server.ts'), 'pglite-thread-entry': path.join(root, 'src', 'db', 'pglite-thread-entry.ts') },
  outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  splitting: true,
  target: 'node20',
  // Stack traces name the TypeScript sources (with --enable-source-maps, as `npm start` runs).
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'warning',
  plugins: [drizzlePgliteImports],
  external: [
    '@electric-sql/pglite',
    '@fastify/swagger-ui',
    '@fastify/ajv-compiler',
    '@fastify/fast-json-stringify-compiler',
    'pg',
    'prom-client',
    // One copy of the OpenTelemetry API and SDK for the whole process; the semantic conventions,
    // plain constants, are bundled (only those used).
    '@opentelemetry/api',
    '@opentelemetry/core',
    '@opentelemetry/context-async-hooks',
    '@opentelemetry/resources',
    '@opentelemetry/sdk-trace-base',
    '@opentelemetry/exporter-trace-otlp-http',
    '@opentelemetry/exporter-trace-otlp-proto',
  ],
  // The CommonJS packages inside (Fastify, undici, pino, ...) call require() for Node's modules.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
});
