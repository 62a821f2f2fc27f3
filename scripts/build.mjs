#!/usr/bin/env node
// Compiles src/, test/, bench/ and scripts/ into dist/ with `tsc -b`, which rebuilds only
// when an input is newer than its last build, then the web UI (ui/, into dist/web), then the
// embedded database's image for a new DATA_DIR (dist/pglite-image, while its migrations last), then
// bundles the server into dist/server (scripts/bundle-server.mjs), then
// makes the ladder-admin bin executable (tsc writes mode 644). `--if-stale` first compares modification times itself, which answers
// in milliseconds where starting tsc takes a second: `npm start` and `npm run admin` use it.
// `--prepare` (after `npm ci`) is the same, and does nothing where TypeScript is not installed.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const buildInfo = path.join(root, 'dist', 'tsconfig.tsbuildinfo');
const bin = path.join(root, 'dist', 'src', 'cli', 'admin.js');
const webIndex = path.join(root, 'dist', 'web', 'index.html');
const imageManifest = path.join(root, 'dist', 'pglite-image', 'image.json');
const serverBundle = path.join(root, 'dist', 'server', 'server.js');
const inputs = ['src', 'test', 'bench', 'scripts', 'ui', 'migrations', 'drizzle.config.ts', 'vitest.config.ts', 'tsconfig.json'];

/** Newest modification time among the inputs; folders count too, so a deleted file is noticed. */
function newestInput() {
  let newest = 0;
  const visit = (file) => {
    if (!existsSync(file)) return;
    const stat = statSync(file);
    newest = Math.max(newest, stat.mtimeMs);
    if (stat.isDirectory()) for (const entry of readdirSync(file)) visit(path.join(file, entry));
  };
  for (const input of inputs) visit(path.join(root, input));
  return newest;
}

function upToDate() {
  return existsSync(buildInfo) && existsSync(bin) && existsSync(webIndex) && existsSync(imageManifest) && existsSync(serverBundle) && statSync(buildInfo).mtimeMs >= newestInput();
}

if (!((process.argv.includes('--if-stale') || process.argv.includes('--prepare')) && upToDate())) {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    // `npm ci --omit=dev` runs `prepare` too: without TypeScript there is nothing to build with.
    if (process.argv.includes('--prepare')) process.exit(0);
    process.stderr.write('dist/ is missing or older than the sources, and TypeScript is not installed: run `npm ci` (with dev dependencies), then `npm run build`.\n');
    process.exit(1);
  }
  const steps = [
    [tsc, '-b', path.join(root, 'tsconfig.json')],
    [tsc, '-p', path.join(root, 'ui', 'tsconfig.json')],
    [path.join(root, 'scripts', 'build-ui.mjs')],
    // A new DATA_DIR's database, initialised and migrated (src/db/pglite-image.ts); kept while current.
    [path.join(root, 'dist', 'scripts', 'pglite-image.js')],
    // The server as `npm start` runs it, bundled into dist/server/ (its entry, its database thread's, their chunks).
    [path.join(root, 'scripts', 'bundle-server.mjs')],
  ];
  for (const args of steps) {
    const result = spawnSync(process.execPath, args, { stdio: 'inherit' });
    if (result.status !== 0) process.exit(result.status ?? 1);
  }
  // tsc -b may have had nothing to do; the build info's time is what --if-stale compares.
  const now = new Date();
  if (existsSync(buildInfo)) utimesSync(buildInfo, now, now);
}
chmodSync(bin, 0o755);
