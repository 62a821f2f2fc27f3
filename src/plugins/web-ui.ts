// The web UI at /ui/: the static files `npm run build` puts in dist/web, read once at start
// and served from memory with their content types, ETags and a strict Content-Security-Policy
// (scripts and styles from this origin only, no inline code; the page's per-response nonce
// admits only the code editor's style elements). Public: the pages hold no data;
// the browser calls the API with the API key the user signs in with.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { notFound } from '../errors.js';

/**
 * The policy. With a nonce, style elements carrying it are allowed too: the playground's code
 * editor (CodeMirror) injects its styles as <style> elements, which it gives the nonce the page
 * reads from its `csp-nonce` meta element. Scripts stay 'self' only.
 */
export function uiCsp(styleNonce?: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    styleNonce ? `style-src 'self' 'nonce-${styleNonce}'` : "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const UI_CSP = uiCsp();

/** Where a page names its nonce (`<meta name="csp-nonce" content="__CSP_NONCE__">`), filled in per response. */
export const NONCE_SLOT = '__CSP_NONCE__';

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
  /** A page that names the nonce: the text before and after its slot. */
  page?: [string, string];
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
    const text = type.startsWith('text/html') ? body.toString('utf8') : '';
    const slot = text.indexOf(NONCE_SLOT);
    const page: Asset['page'] = slot >= 0 ? [text.slice(0, slot), text.slice(slot + NONCE_SLOT.length)] : undefined;
    assets.set(file.split(path.sep).join('/'), { body, type, etag, page });
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
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cross-origin-opener-policy', 'same-origin');
    if (asset.page) {
      // A fresh nonce per response, so the page is never served from a cache (nor as a 304,
      // which would pair the cached body's nonce with this response's policy).
      const nonce = randomBytes(16).toString('base64');
      reply.header('cache-control', 'no-store').header('content-security-policy', uiCsp(nonce));
      return reply.send(asset.page[0] + nonce + asset.page[1]);
    }
    // Names are not content-hashed, so the browser revalidates each time (a cheap 304).
    reply.header('etag', asset.etag).header('cache-control', 'no-cache').header('content-security-policy', UI_CSP);
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.send(asset.body);
  });
}

export default fp(webUi, { name: 'web-ui', fastify: '5.x' });
