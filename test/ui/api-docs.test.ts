// The API reference at /docs in a real Chromium: it reads /v1/openapi.json, and "Try it out"
// on chat completions sends the documented example, which the service answers with 200.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createUser } from '../helpers/build.js';
import { browserMissing, launchBrowser, onPage, startUiApp, type UiApp } from './browser.js';

const WAIT = { timeout: 20_000 };

describe.skipIf(browserMissing)('API reference at /docs in Chromium', () => {
  let ui: UiApp;
  let browser: Browser;
  let key: string;
  beforeAll(async () => {
    ui = await startUiApp();
    browser = await launchBrowser();
    const user = await createUser(ui.app);
    key = user.key;
    const connected = await ui.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: ui.fake.apiKey } });
    expect(connected.statusCode).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await ui?.close();
  });

  it('loads /v1/openapi.json and runs the chat example with "Try it out"', () => onPage(browser, 'api docs try it out', async (page) => {
    // The page works under its Content-Security-Policy: nothing it needs is refused.
    const refused: string[] = [];
    page.on('console', (m) => {
      if (/Content.Security.Policy/i.test(m.text())) refused.push(m.text());
    });
    const documentLoaded = page.waitForResponse((res) => new URL(res.url()).pathname === '/v1/openapi.json' && res.status() === 200, WAIT);
    const docs = await page.goto(`${ui.base}/docs`);
    expect(docs!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(docs!.headers()['x-frame-options']).toBe('DENY');
    await documentLoaded;

    await page.locator('.auth-wrapper button.authorize').click();
    const apiKey = page.locator('.modal-ux .auth-container').first();
    await apiKey.locator('input').fill(key);
    await apiKey.locator('button.authorize').click();
    await apiKey.getByText('Authorized', { exact: true }).waitFor(WAIT);
    await page.locator('.modal-ux button.close-modal').click();

    const operation = page.locator('#operations-chat-createChatCompletion');
    await operation.locator('.opblock-summary').first().click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    const body = JSON.parse(await operation.locator('textarea.body-param__text').inputValue()) as Record<string, unknown>;
    expect(body).toMatchObject({ model: 'gpt-4o-mini', max_completion_tokens: 256 });
    expect(body.stream).toBeUndefined();

    const answered = page.waitForResponse((res) => new URL(res.url()).pathname === '/v1/chat/completions', WAIT);
    await operation.getByRole('button', { name: 'Execute' }).click();
    expect((await answered).status()).toBe(200);
    expect(ui.fake.requests).toHaveLength(1);
    expect(refused).toEqual([]);
  }), 90_000);
});
