// The dashboard pages in a real Chromium, signed in with a `manage` key: Keys (create, copy
// once, call the API with the shown secret, revoke), Providers (add against the fake vendor,
// reorder, health, remove), Usage (calls just made, in the chart and the tables), Ladders (a
// pushed ladder, opened in the playground). A `use` key sees none of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../helpers/build.js';
import { minimalLadder } from '../ladders/examples.js';
import { usd } from '../../ui/src/format.js';
import { browserMissing, launchBrowser, onPage, signIn, startUiApp, type UiApp } from './browser.js';

type User = Awaited<ReturnType<typeof createUser>>;
const WAIT = { timeout: 15_000 };

describe.skipIf(browserMissing)('dashboard pages in Chromium', () => {
  let ui: UiApp;
  let browser: Browser;
  beforeAll(async () => {
    ui = await startUiApp();
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await ui?.close();
  });

  const run = (name: string, body: (page: Page) => Promise<void>, viewport?: { width: number; height: number }) =>
    it(name, () => onPage(browser, name, body, viewport), 90_000);
  const call = (key: string, method: string, path: string, body?: unknown) =>
    fetch(`${ui.base}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
  const manager = () => createUser(ui.app, undefined, 'manage');

  run('Keys: a new key’s secret is shown once, works against the API, and stops working when revoked', async (page) => {
    const user = await manager();
    await signIn(page, ui.base, user.key, '#/keys');
    await page.getByRole('heading', { name: 'API keys' }).waitFor(WAIT);
    await page.locator(`tr[data-key="${user.keyId}"]`, { hasText: 'signed in here' }).waitFor(WAIT);

    await page.getByLabel('Name').fill('deploy bot');
    await page.getByLabel('Ladder access').selectOption('whitelist');
    await page.getByLabel('Ladders', { exact: true }).fill(`${user.username}/summarise`);
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByRole('textbox', { name: 'Your new key' });
    await secret.waitFor(WAIT);
    const key = await secret.inputValue();
    expect(key).toMatch(/^ldr_live_/);

    const account = await call(key, 'GET', '/v1/account');
    expect(account.status).toBe(200);
    const body = (await account.json()) as { username: string; key: { name: string; scope: string; access: unknown; expires_at: string | null } };
    expect(body.username).toBe(user.username);
    expect(body.key).toMatchObject({ name: 'deploy bot', scope: 'use', access: { mode: 'whitelist', ladders: [`${user.username}/summarise`] }, expires_at: null });

    const row = page.locator('tr', { hasText: 'deploy bot' });
    await expect(row.textContent()).resolves.toContain(`only ${user.username}/summarise`);
    await expect(row.textContent()).resolves.toContain('never');
    // Once stored, the secret leaves the page.
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.content()).not.toContain(key);

    // Revoking asks first; Cancel keeps the key.
    await row.getByRole('button', { name: 'Revoke deploy bot' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await call(key, 'GET', '/v1/account')).status).toBe(200);
    await row.getByRole('button', { name: 'Revoke deploy bot' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await row.locator('.badge', { hasText: 'revoked' }).waitFor(WAIT);
    expect((await call(key, 'GET', '/v1/account')).status).toBe(401);
  });

  run('Keys: an expiry date is sent as the end of that day and shown; a manage key can be made', async (page) => {
    const user = await manager();
    await signIn(page, ui.base, user.key, '#/keys');
    await page.getByLabel('Name').fill('expiring');
    await page.getByLabel(/^manage:/).check();
    await page.getByLabel('Expires (optional)').fill('2031-03-05');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('textbox', { name: 'Your new key' }).waitFor(WAIT);
    const list = (await (await call(user.key, 'GET', '/v1/api-keys')).json()) as { data: Array<{ name: string; scope: string; expires_at: string }> };
    const made = list.data.find((k) => k.name === 'expiring')!;
    expect(made.scope).toBe('manage');
    // The browser's zone is the machine's; the key ends on that local day's last millisecond.
    expect(made.expires_at).toBe(await page.evaluate(() => new Date('2031-03-05T23:59:59.999').toISOString()));
    await expect(page.locator('tr', { hasText: 'expiring' }).textContent()).resolves.toContain('2031');

    // A malformed ladder is refused before any request.
    await page.getByLabel('Ladder access').selectOption('blacklist');
    await page.getByLabel('Ladders', { exact: true }).fill('not a ladder');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('“not” is not author/ladder or author/*.').waitFor(WAIT);
  });

  run('Providers: add a connection to the fake vendor, see it masked and healthy, reorder, see a failure, remove', async (page) => {
    const user = await manager();
    await signIn(page, ui.base, user.key, '#/providers');
    await page.getByRole('heading', { name: 'Providers' }).waitFor(WAIT);
    await page.getByText('No connections yet').waitFor(WAIT);
    await page.getByLabel('Provider').selectOption('openai');
    await page.getByLabel('API key').fill(ui.fake.apiKey);
    await page.getByLabel('Label (optional)').fill('Main key');
    await page.getByRole('button', { name: 'Add connection' }).click();
    const openai = page.locator('tr[data-provider="openai"]');
    await openai.waitFor(WAIT);
    const text = (await openai.textContent())!;
    expect(text).toContain('Main key');
    expect(text).toContain('closed');
    expect(text).not.toContain(ui.fake.apiKey);
    // The key works: a chat call through it succeeds.
    const chat = await call(user.key, 'POST', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(200);

    await page.getByLabel('Provider').selectOption('groq');
    await page.getByLabel('API key').fill('gsk_test_0123456789abcdef');
    await page.getByRole('button', { name: 'Add connection' }).click();
    await page.locator('tr[data-provider="groq"]').waitFor(WAIT);
    await page.getByRole('button', { name: 'Move Groq up' }).click();
    await page.locator('tbody tr').first().and(page.locator('tr[data-provider="groq"]')).waitFor(WAIT);
    const listed = (await (await call(user.key, 'GET', '/v1/providers')).json()) as { data: Array<{ provider: string; priority: number }> };
    expect(listed.data.map((c) => [c.provider, c.priority])).toEqual([['groq', 0], ['openai', 10]]);

    // A failure at the vendor shows as the connection's last error once the page reloads its list.
    await page.getByRole('button', { name: 'Remove Groq' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove connection' }).click();
    await page.locator('tr[data-provider="groq"]').waitFor({ state: 'detached', ...WAIT });
    ui.fake.script({ kind: 'error', status: 503 });
    expect((await call(user.key, 'POST', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(502);
    await page.reload();
    await expect(page.locator('tr[data-provider="openai"]').textContent()).resolves.toContain('server_error (HTTP 503)');
    expect((await call(user.key, 'GET', '/v1/providers').then((r) => r.json()) as { data: unknown[] }).data).toHaveLength(1);
  });

  run('Usage: the calls just made are in the chart and in the tables by key and by ladder', async (page) => {
    const user = await manager();
    await call(user.key, 'POST', '/v1/providers', { provider: 'openai', api_key: ui.fake.apiKey });
    await call(user.key, 'PUT', `/v1/${user.username}/refine`, { config: minimalLadder });
    ui.fake.script(
      { kind: 'reply', content: 'a', usage: { prompt: 100, completion: 20 } },
      { kind: 'reply', content: 'b', usage: { prompt: 300, completion: 80 } },
    );
    for (let i = 0; i < 2; i++) {
      expect((await call(user.key, 'POST', '/v1/chat/completions', { model: i === 0 ? 'gpt-4o-mini' : 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })).status).toBe(200);
    }
    const ladderRun = await call(user.key, 'POST', `/v1/${user.username}/refine/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'y' }] });
    expect(ladderRun.status).toBe(200);
    const ladderTokens = ((await ladderRun.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
    const today = new Date().toISOString().slice(0, 10);
    const report = (await (await call(user.key, 'GET', `/v1/usage?start=${today}&end=${today}&group_by=day`)).json()) as { data: Array<{ total_tokens: number; cost_usd: number; requests: number }> };
    const [day] = report.data;
    expect(day!.total_tokens).toBe(120 + 380 + ladderTokens);
    expect(day!.requests).toBe(4); // two direct calls, and the ladder's two steps

    await signIn(page, ui.base, user.key, '#/usage');
    await page.getByRole('heading', { name: 'Spend per day' }).waitFor(WAIT);
    await expect(page.locator('#total-tokens').textContent()).resolves.toBe(day!.total_tokens.toLocaleString('en-US'));
    await expect(page.locator('#total-spend').textContent()).resolves.toBe(usd(day!.cost_usd));
    await expect(page.locator('#total-requests').textContent()).resolves.toBe(String(day!.requests));
    // Today's bar in the token chart: one segment per model, adding up to the day.
    const bar = page.locator(`[aria-label^="Tokens per day"] .bar-group[data-label="${today}"]`);
    expect(Number(await bar.getAttribute('data-total'))).toBe(day!.total_tokens);
    const segments = await bar.locator('rect').evaluateAll((rects) => rects.map((r) => [r.getAttribute('data-series'), Number(r.getAttribute('data-value'))]));
    // Stacked in the spend chart's order (the dearer model first), so both charts share colours.
    expect(segments).toEqual([['gpt-4o', 380], ['gpt-4o-mini', 120 + ladderTokens]]);
    await page.getByRole('list', { name: 'Colours of the charts' }).getByText('gpt-4o-mini').waitFor(WAIT);

    // By provider: every call went to openai.
    await page.getByLabel('Provider', { exact: true }).check();
    await page.locator(`[aria-label="Tokens per day by provider, last 30 days"] .bar-group[data-label="${today}"] rect[data-series="openai"][data-value="${day!.total_tokens}"]`).waitFor(WAIT);

    const byKey = page.locator('#usage-by-key tbody tr');
    await expect(byKey.count()).resolves.toBe(1);
    await expect(byKey.first().locator('th').textContent()).resolves.toContain(user.key.slice(0, 12));
    await expect(byKey.first().locator('td').allTextContents()).resolves.toEqual(['4', day!.total_tokens.toLocaleString('en-US'), usd(day!.cost_usd)]);
    const byLadder = await page.locator('#usage-by-ladder tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    expect(byLadder.map((r) => r.slice(0, 3)).sort()).toEqual([
      [`${user.username}/refine`, '2', ladderTokens.toLocaleString('en-US')],
      ['direct calls (no ladder)', '2', '500'],
    ].sort());
  });

  run('Ladders: a pushed ladder is listed with its visibility and version, and opens in the playground', async (page) => {
    const user = await manager();
    for (let i = 0; i < 2; i++) {
      const saved = await call(user.key, 'PUT', `/v1/${user.username}/refine`, { config: { ...minimalLadder, description: `v${i + 1}` }, usage_visibility: 'unlisted' });
      expect(saved.status).toBeLessThan(300);
    }
    await signIn(page, ui.base, user.key, '#/ladders');
    const row = page.locator(`tr[data-ladder="${user.username}/refine"]`);
    await row.waitFor(WAIT);
    await expect(row.locator('td').allTextContents()).resolves.toEqual(expect.arrayContaining(['v2', 'unlisted', 'private']));
    await row.getByRole('link', { name: `Open ${user.username}/refine in the playground` }).click();
    // The playground's editor (CodeMirror) is a text box whose text is its content.
    const editor = page.getByRole('textbox', { name: 'Ladder config (YAML or JSON)' });
    await editor.waitFor(WAIT);
    await expect(page.getByLabel('Save as ladder').inputValue()).resolves.toBe(`${user.username}/refine`);
    await expect(editor.innerText()).resolves.toContain('description: v2');
    expect(page.url()).toMatch(/#\/playground$/);
  });

  run('a use key sees runs and the playground, no dashboard page, and a clear message at its address', async (page) => {
    const user: User = await createUser(ui.app);
    await signIn(page, ui.base, user.key);
    const asked = ui.requests.length;
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(nav.getByRole('link').allTextContents()).resolves.toEqual(['Runs', 'Playground']);
    await page.goto(`${ui.base}/ui/#/keys`);
    await page.getByText('This page needs an API key with the manage scope.').waitFor(WAIT);
    expect(ui.requests.slice(asked).filter((r) => r === 'GET /v1/api-keys')).toEqual([]);
    const manage = await manager();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, ui.base, manage.key);
    await expect(nav.getByRole('link').allTextContents()).resolves.toEqual(['Runs', 'Playground', 'Ladders', 'Usage', 'Keys', 'Providers']);
  });

  run('on a phone the dashboard pages fit the screen and are reached from the menu by keyboard', async (page) => {
    const user = await manager();
    // A row in every table, with a long key name.
    await call(user.key, 'POST', '/v1/providers', { provider: 'openai', api_key: ui.fake.apiKey, label: 'A rather long label for a connection' });
    await call(user.key, 'PATCH', `/v1/api-keys/${user.keyId}`, { name: 'the key of the operations dashboard' });
    expect((await call(user.key, 'POST', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })).status).toBe(200);
    await signIn(page, ui.base, user.key, '#/usage');
    await page.locator('#usage-by-key tbody th').first().waitFor(WAIT);
    for (const [link, heading] of [['Usage', 'Spend per day'], ['Keys', 'API keys'], ['Providers', 'Providers'], ['Ladders', 'Ladders']]) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: heading }).first().waitFor(WAIT);
      await page.locator('main table tbody tr:visible').first().waitFor(WAIT);
      // The document never scrolls sideways (wide tables scroll inside their own box).
      expect(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth'), link).toBe(true);
    }
  }, { width: 390, height: 844 });
});
