// "Run again" on the run page, in a real Chromium against a real worker: rerun a finished run on
// a new version whose last step changed, land on the new run, and see that only the last step
// was paid for (one call reused, one made), in the facts and on the timeline.
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { LadderConfig, ModelStep } from '../../src/ladders/language/config.js';
import { createUser } from '../helpers/build.js';
import { waitForStatus } from '../helpers/instances.js';
import { minimalLadder } from '../ladders/examples.js';
import { browserMissing, launchBrowser, onPage, signIn, startUiApp, type UiApp } from './browser.js';

const WAIT = { timeout: 15_000 };
const [draft, refine] = minimalLadder.steps as [ModelStep, ModelStep];
const shorter: LadderConfig = { ...minimalLadder, steps: [draft, { ...refine, systemPrompt: 'Say it in one sentence.' }] };

describe.skipIf(browserMissing)('Run again, in Chromium', () => {
  let ui: UiApp;
  let browser: Browser;
  beforeAll(async () => {
    // One worker: the reruns started from the page run here.
    ui = await startUiApp({ WORKER_CONCURRENCY: '1', WORKER_POLL_MS: '200' });
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await ui?.close();
  });

  it('reruns a finished run on a new version and shows that one call was reused', () =>
    onPage(browser, 'run again', async (page) => {
      const user = await createUser(ui.app);
      const inject = (method: 'POST' | 'PUT', url: string, payload: object) => ui.app.inject({ method, url, headers: user.headers, payload });
      expect((await inject('POST', '/v1/providers', { provider: 'openai', api_key: ui.fake.apiKey })).statusCode).toBe(201);
      expect((await inject('PUT', `/v1/${user.username}/twice`, { config: minimalLadder })).statusCode).toBe(201);
      const started = await inject('POST', '/v1/pipelines/instances', { author: user.username, template: 'twice', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Why is the sea salty?' }] });
      const sourceId = started.json<{ instanceId: string }>().instanceId;
      await waitForStatus(ui.database, sourceId, ['completed']);
      expect((await inject('PUT', `/v1/${user.username}/twice`, { config: shorter })).statusCode).toBe(200);
      ui.fake.reset();

      await signIn(page, ui.base, user.key, `#/runs/${sourceId}`);
      await page.getByRole('heading', { name: 'Run again' }).waitFor(WAIT);
      await page.getByText('This run used version 1; the latest is 2.').waitFor(WAIT);
      await expect(page.getByLabel('Model').inputValue()).resolves.toBe('gpt-4o-mini');
      await page.getByLabel('Version').fill('2');
      await page.getByRole('button', { name: 'Run again' }).click();

      await page.waitForURL((url) => /#\/runs\/[0-9a-f-]{36}$/.test(url.hash) && !url.hash.endsWith(sourceId), WAIT);
      const rerunId = page.url().split('/').at(-1)!;
      await page.getByText('1 of 2, saving $').waitFor(WAIT);
      await page.getByRole('button', { name: /^Node 1 of draft: Succeeded, reused, not paid again/ }).waitFor(WAIT);
      await page.getByRole('button', { name: /^Node 1 of refine: Succeeded, openai/ }).waitFor(WAIT);
      await page.getByRole('heading', { name: 'Answer' }).waitFor(WAIT);
      await expect(page.getByRole('link', { name: sourceId.slice(0, 8) }).getAttribute('href')).resolves.toBe(`#/runs/${sourceId}`);
      await page.screenshot({ path: path.join(tmpdir(), 'ladder-ui-run-again.png'), fullPage: true });

      expect(ui.fake.requests.map((r) => r.body.messages[0].content)).toEqual([expect.stringContaining('Say it in one sentence.')]);
      const [row] = await ui.database.query<{ rerun_of: string; ladder_version: number; spend_nanos: number }>('select rerun_of, ladder_version, spend_nanos from instances where id = $1', [rerunId]);
      expect(row).toMatchObject({ rerun_of: sourceId, ladder_version: 2 });
    }), 90_000);
});
