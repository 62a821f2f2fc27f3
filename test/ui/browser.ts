// Browser tests drive the real web UI in Chromium (playwright-core, headless) against the real
// app on a plain-HTTP port, with a fake OpenAI behind it. Outside CI they are skipped when
// Chromium is not installed; in CI they must run.
import { existsSync, mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import app from '../../src/app.js';
import type { Database } from '../../src/db/client.js';
import { fastifyOptions } from '../../src/server-options.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { openTestDatabase } from '../helpers/database.js';
import { testConfig } from '../helpers/build.js';
import { ensureUiBuilt } from '../helpers/web-ui.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const browserMissing = !existsSync(CHROMIUM);
if (browserMissing && process.env.CI) throw new Error(`Browser tests need Chromium at ${CHROMIUM} in CI (.ci/run installs it).`);
if (browserMissing) console.warn(`Skipping browser tests: no Chromium at ${CHROMIUM} (install it, or set CHROMIUM_PATH).`);

export interface UiApp {
  base: string;
  app: FastifyInstance;
  database: Database;
  fake: FakeVendor;
  /** Every API request the app has answered, as "METHOD /path" (recorded once the response is sent,
   *  so a test that sees one can read what the handler wrote). */
  requests: string[];
  close(): Promise<void>;
}

export async function startUiApp(env: Record<string, string> = {}): Promise<UiApp> {
  ensureUiBuilt();
  const fake = await startFakeOpenAI();
  // No workers: the live-run tests write the run's rows themselves, as a worker elsewhere would.
  const config = testConfig({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl, SSE_POLL_MS: '100', WORKER_CONCURRENCY: '0', ...env });
  const database = await openTestDatabase();
  const fastify = Fastify(fastifyOptions(config));
  const requests: string[] = [];
  fastify.addHook('onResponse', async (request) => {
    if (request.url.startsWith('/v1/')) requests.push(`${request.method} ${request.url.split('?')[0]}`);
  });
  await fastify.register(app, { config, database });
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  return {
    base: `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`,
    app: fastify,
    database,
    fake,
    requests,
    close: async () => {
      await fastify.close();
      await database.close();
      await fake.close();
    },
  };
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage'] });
}

const shots = mkdtempSync(path.join(tmpdir(), 'ladder-ui-failures-'));

/** Runs `body` on a fresh page; on failure saves a screenshot, prints its path and rethrows. */
export async function onPage(browser: Browser, name: string, body: (page: Page) => Promise<void>, viewport = { width: 1280, height: 900 }): Promise<void> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const logs: string[] = [];
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
  try {
    await body(page);
  } catch (error) {
    const file = path.join(shots, `${name.replace(/\W+/g, '-')}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    console.error(`Screenshot of the failed browser test "${name}": ${file}\nBrowser console:\n${logs.join('\n')}`);
    throw error;
  } finally {
    await context.close();
  }
}

export async function signIn(page: Page, base: string, key: string, hash = '#/runs'): Promise<void> {
  await page.goto(`${base}/ui/${hash}`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}
