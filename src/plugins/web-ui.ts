// The web UI at /ui/: the static files `npm run build` puts in dist/web, read once at start
// and served from memory with their content types, ETags and a strict Content-Security-Policy
// (scripts and styles from this origin only, no inline code). Public: the pages hold no data;
// the browser calls the API with the API key the user signs in with.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { notFound } from '../errors.js';

export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export interface WebUiOptions {
  /** The built UI; default: dist/web of the installed service (absent: /ui/ answers 404 ui_not_built). */
  dir?: string;
}

/** dist/web at the project root, whether we run from src/ (tests) or from dist/src/. */
export function webUiFolder(): string | null {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'dist', 'web');
    if (existsSync(path.join(candidate, 'index.html'))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const file of readdirSync(dir, { recursive: true }).map(String)) {
    const type = TYPES[path.extname(file)];
    if (!type) continue;
    const body = readFileSync(path.join(dir, file));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    assets.set(file.split(path.sep).join('/'), { body, type, etag });
  }
  return assets;
}

async function webUi(app: FastifyInstance, options: WebUiOptions) {
  const dir = options.dir ?? webUiFolder();
  const assets = dir ? loadAssets(dir) : new Map<string, Asset>();

  app.get('/ui', { schema: { hide: true } }, (_request, reply) => reply.redirect('/ui/', 301));
  app.get('/ui/*', { schema: { hide: true } }, async (request, reply) => {
    const wanted = (request.params as { '*': string })['*'] || 'index.html';
    // Hash routes (#/runs/...) never reach us; any other unknown path is a 404, not the index.
    const asset = assets.get(wanted);
    if (!asset) {
      throw assets.size === 0
        ? notFound('ui_not_built', 'The web UI is not built: run `npm run build`.')
        : notFound('unknown_route', `Unknown request URL: GET /ui/${wanted}.`);
    }
    reply
      .header('content-type', asset.type)
      .header('etag', asset.etag)
      // Names are not content-hashed, so the browser revalidates each time (a cheap 304).
      .header('cache-control', 'no-cache')
      .header('content-security-policy', UI_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cross-origin-opener-policy', 'same-origin');
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.send(asset.body);
  });
}

export default fp(webUi, { name: 'web-ui', fastify: '5.x' });
