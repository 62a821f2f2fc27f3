// `npm run screenshot:dashboard`: docs/screenshots/*.png, the dashboard pages of the web UI
// (Keys, Providers, Usage, Ladders) on a desktop and Usage on a phone. The real app (embedded
// database in a temporary folder) is filled through its API: keys, two connections to local
// fake vendors (the second one failing, so its circuit is open), three ladders, and thirty days
// of calls made under a moved clock, so the usage ledger holds what a month of traffic leaves.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { chromium, type Page } from 'playwright-core';
import app from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { fastifyOptions } from '../src/server-options.js';
import { startFakeAnthropic, startFakeOpenAI } from '../test/fakes/vendors.js';
import { gatedTreeOfThought, minimalLadder } from '../test/ladders/examples.js';

const OUT = path.resolve(process.argv[2] ?? 'docs/screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ADMIN_TOKEN = 'screenshot-admin-token-0123456789';
const DAY_MS = 86_400_000;

async function main(): Promise<void> {
  const openai = await startFakeOpenAI();
  const anthropic = await startFakeAnthropic();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-dashboard-shots-'));
  const config = loadConfig({
    PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'fatal', ALLOW_PRIVATE_ENDPOINTS: 'true', WORKER_CONCURRENCY: '0',
    PROVIDER_BASE_URL_OPENAI: openai.baseUrl, PROVIDER_BASE_URL_ANTHROPIC: anthropic.baseUrl, USAGE_FLUSH_ROWS: '1',
  });
  const database = await openDatabase({ url: null, dataDir: path.join(dataDir, 'pgdata'), migrate: true });
  let now: number | null = null;
  const fastify = Fastify(fastifyOptions(config));
  await fastify.register(app, { config, database, clock: () => now ?? Date.now() });
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`;
  const call = async (method: string, url: string, token: string, body?: unknown) => {
    const res = await fastify.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}` }, ...(body ? { payload: body as object } : {}) });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json<Record<string, any>>();
  };
  try {
    await call('POST', '/v1/admin/accounts', ADMIN_TOKEN, { username: 'demo' });
    const owner = (await call('POST', '/v1/admin/accounts/demo/api-keys', ADMIN_TOKEN, { name: 'dashboard', scope: 'manage' })).key as string;
    const ci = (await call('POST', '/v1/api-keys', owner, { name: 'ci deploys', access: { mode: 'whitelist', ladders: ['demo/summarise'] } })).key as string;
    await call('POST', '/v1/api-keys', owner, { name: 'staging', expires_at: new Date(Date.now() + 60 * DAY_MS).toISOString() });
    const laptop = await call('POST', '/v1/api-keys', owner, { name: 'old laptop' });
    await call('DELETE', `/v1/api-keys/${laptop.id}`, owner);
    await call('POST', '/v1/providers', owner, { provider: 'openai', api_key: openai.apiKey, label: 'Main OpenAI key' });
    await call('POST', '/v1/providers', owner, { provider: 'anthropic', api_key: anthropic.apiKey, label: 'Team Anthropic' });
    await call('PUT', '/v1/demo/summarise', owner, { config: { ...minimalLadder, name: 'Summarise' }, usage_visibility: 'public', config_visibility: 'public', description: 'Two passes: draft, then tighten.' });
    await call('PUT', '/v1/demo/summarise', owner, { config: { ...minimalLadder, name: 'Summarise' }, usage_visibility: 'public', config_visibility: 'public', description: 'Two passes: draft, then tighten (shorter prompts).' });
    await call('PUT', '/v1/demo/tree-of-thought', owner, { config: gatedTreeOfThought, usage_visibility: 'unlisted' });
    await call('PUT', '/v1/demo/draft-and-judge', owner, { config: { ...minimalLadder, name: 'Draft and judge' } });

    // Thirty days of traffic, more on weekdays, each day a little different.
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    for (let d = 29; d >= 0; d--) {
      const weekday = new Date(today - d * DAY_MS).getUTCDay() % 6 !== 0;
      const calls: Array<[string, string]> = [
        ...Array.from({ length: (weekday ? 4 : 1) + (d % 3) }, () => ['gpt-4o-mini', owner] as [string, string]),
        ...Array.from({ length: weekday ? 1 + (d % 2) : 0 }, () => ['gpt-4o', owner] as [string, string]),
        ...Array.from({ length: (d % 4) + (weekday ? 1 : 0) }, () => ['claude-sonnet-4-5', owner] as [string, string]),
      ];
      for (const [i, [model, key]] of calls.entries()) {
        now = today - d * DAY_MS + (9 + i) * 3_600_000;
        const usage = { prompt: 900 + ((d * 37 + i * 101) % 1400), completion: 250 + ((d * 53 + i * 17) % 500) };
        (model.startsWith('claude') ? anthropic : openai).script({ kind: 'reply', content: 'Done.', usage });
        await call('POST', '/v1/chat/completions', key, { model, messages: [{ role: 'user', content: 'Summarise the meeting notes.' }] });
      }
      if (d % 2 === 0) {
        now = today - d * DAY_MS + 20 * 3_600_000;
        openai.script({ kind: 'reply', content: 'Draft.', usage: { prompt: 1200, completion: 400 } }, { kind: 'reply', content: 'Final.', usage: { prompt: 1700, completion: 300 } });
        await call('POST', '/v1/demo/summarise/chat/completions', ci, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'The quarterly report.' }] });
      }
    }
    now = null;
    // Anthropic starts failing: three 503s in a row open its circuit.
    for (let i = 0; i < 3; i++) {
      anthropic.script({ kind: 'error', status: 503 });
      await fastify.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${owner}` }, payload: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'x' }] } });
    }

    mkdirSync(OUT, { recursive: true });
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking'] });
    const shoot = async (viewport: { width: number; height: number }, shots: Array<[string, string, (page: Page) => Promise<void>]>) => {
      const context = await browser.newContext({ viewport, deviceScaleFactor: 1, colorScheme: 'light' });
      const page = await context.newPage();
      await page.goto(`${base}/ui/#/runs`);
      await page.getByLabel('API key').fill(owner);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      for (const [hash, file, ready] of shots) {
        await page.goto(`${base}/ui/${hash}`);
        await ready(page);
        await page.screenshot({ path: path.join(OUT, file), fullPage: true });
        console.log(`wrote ${path.relative(process.cwd(), path.join(OUT, file))}`);
      }
      await context.close();
    };
    const usageReady = async (page: Page) => {
      await page.locator('svg.chart .bar-group rect').first().waitFor();
      await page.locator('#usage-by-key tbody tr').first().waitFor();
    };
    await shoot({ width: 1280, height: 900 }, [
      ['#/keys', 'keys.png', async (page) => {
        await page.locator('tr', { hasText: 'old laptop' }).waitFor();
        await page.getByLabel('Name').fill('analytics notebook');
        await page.getByRole('button', { name: 'Create key' }).click();
        await page.getByRole('textbox', { name: 'Your new key' }).waitFor();
        await page.getByRole('button', { name: 'Copy' }).focus();
      }],
      ['#/providers', 'providers.png', (page) => page.locator('tr[data-provider="anthropic"]').waitFor()],
      ['#/usage', 'usage.png', usageReady],
      ['#/ladders', 'ladders.png', (page) => page.locator('tr[data-ladder="demo/summarise"]').waitFor()],
    ]);
    await shoot({ width: 390, height: 844 }, [['#/usage', 'usage-phone.png', usageReady]]);
    await browser.close();
  } finally {
    await fastify.close();
    await database.close();
    await openai.close();
    await anthropic.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
