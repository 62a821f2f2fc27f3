// Serving the web UI: its files, content types, caching and Content-Security-Policy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UI_CSP } from '../../src/plugins/web-ui.js';
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
    expect(res.headers['content-security-policy']).toBe(UI_CSP);
    expect(UI_CSP).toContain("script-src 'self'");
    expect(UI_CSP).not.toContain('unsafe-inline');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.body).toContain('<script type="module" src="main.js"></script>');
    expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.body).not.toMatch(/https?:\/\/(?!127)/);
  });

  it('redirects /ui to /ui/', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ui' });
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe('/ui/');
  });

  it('serves scripts, styles and the bundled yaml parser with their types, and answers 304 to a matching ETag', async () => {
    for (const [url, type] of [['/ui/main.js', 'text/javascript'], ['/ui/styles.css', 'text/css'], ['/ui/vendor/yaml/index.js', 'text/javascript']] as const) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe(`${type}; charset=utf-8`);
      const again = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': res.headers.etag as string } });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
    }
  });

  it('answers 404 in the envelope for a file it does not have', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ui/../package.json' });
    expect(res.statusCode).toBe(404);
    const other = await t.app.inject({ method: 'GET', url: '/ui/nothing.js' });
    expect(other.statusCode).toBe(404);
    expect(other.json().error.code).toBe('unknown_route');
  });
});
