// Serving the web UI: its files, content types, caching and Content-Security-Policy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NONCE_SLOT, UI_CSP, uiCsp } from '../../src/plugins/web-ui.js';
import { build, type TestApp } from '../helpers/build.js';
import { ensureUiBuilt } from '../helpers/web-ui.js';

describe('the web UI’s files', () => {
  let t: TestApp;
  beforeAll(async () => {
    ensureUiBuilt();
    t = await build();
  }, 120_000);
  afterAll(() => t?.close());

  it('serves the page at /ui/ with a strict CSP and no inline script', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ui/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const nonce = /<meta name="csp-nonce" content="([A-Za-z0-9+/]{22}==)">/.exec(res.body)?.[1];
    expect(nonce).toBeDefined();
    expect(res.headers['content-security-policy']).toBe(uiCsp(nonce));
    expect(res.headers['content-security-policy']).toContain(`style-src 'self' 'nonce-${nonce}'; `);
    expect(UI_CSP).toContain("script-src 'self'");
    expect(UI_CSP).not.toContain('unsafe-inline');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toContain('<script type="module" src="main.js"></script>');
    expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.body).not.toMatch(/https?:\/\/(?!127)/);
  });

  it('gives the page a new style nonce each time, so it is never cached', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/ui/' });
    const second = await t.app.inject({ method: 'GET', url: '/ui/index.html', headers: { 'if-none-match': '*' } });
    expect(second.statusCode).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.headers.etag).toBeUndefined();
    expect(first.headers['content-security-policy']).not.toBe(second.headers['content-security-policy']);
    expect(first.body).not.toBe(second.body);
    expect(first.body).not.toContain(NONCE_SLOT);
  });

  it('redirects /ui to /ui/', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ui' });
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe('/ui/');
  });

  it('serves scripts, styles, the yaml parser and the code editor with their types, and answers 304 to a matching ETag', async () => {
    const files = [['/ui/main.js', 'text/javascript'], ['/ui/styles.css', 'text/css'], ['/ui/editor.css', 'text/css'], ['/ui/vendor/yaml/index.js', 'text/javascript'], ['/ui/code-editor.js', 'text/javascript']] as const;
    for (const [url, type] of files) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe(`${type}; charset=utf-8`);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toBe(UI_CSP);
      const again = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': res.headers.etag as string } });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
    }
  });

  it('serves the code editor as one bundle: CodeMirror inside, no import left for the browser to resolve', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ui/code-editor.js' });
    expect(res.body).toContain('cm-content');
    expect(res.body).not.toMatch(/\bfrom\s*["']@?[a-z]/);
    expect(res.body).not.toMatch(/\bimport\s*\(/);
    expect(res.body).toMatch(/export\s*\{[^}]*createCodeEditor/);
  });

  it('answers 404 in the envelope for a file it does not have', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ui/../package.json' });
    expect(res.statusCode).toBe(404);
    const other = await t.app.inject({ method: 'GET', url: '/ui/nothing.js' });
    expect(other.statusCode).toBe(404);
    expect(other.json().error.code).toBe('unknown_route');
  });
});
