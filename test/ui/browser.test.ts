// The web UI in a real Chromium: sign in, watch a run fill in live, open a node, cancel a run,
// fix a config in the playground and run it. Live progress is written into the database the
// served app reads, as a runner in any process would (test/helpers/instance-events.ts).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../helpers/build.js';
import { appendEvents, finishInstance, insertInstance, nodeCompleted } from '../helpers/instance-events.js';
import { browserMissing, launchBrowser, onPage, signIn, startUiApp, type UiApp } from './browser.js';

type User = Awaited<ReturnType<typeof createUser>>;
const WAIT = { timeout: 15_000 };
/** Screenshots of the states these tests reach, to look at (their folder is printed once). */
const SHOTS = mkdtempSync(path.join(tmpdir(), 'ladder-ui-shots-'));
console.info(`Web UI screenshots: ${SHOTS}`);

describe.skipIf(browserMissing)('web UI in Chromium', () => {
  let ui: UiApp;
  let browser: Browser;
  let user: User;
  beforeAll(async () => {
    ui = await startUiApp();
    browser = await launchBrowser();
    user = await createUser(ui.app);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await ui?.close();
  });

  const run = (name: string, body: (page: Page) => Promise<void>, viewport?: { width: number; height: number }) =>
    it(name, () => onPage(browser, name, body, viewport), 90_000);

  run('signs in with an API key kept in sessionStorage only', async (page) => {
    await page.goto(`${ui.base}/ui/`);
    await expect(page.getByRole('heading', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
    await page.getByLabel('API key').fill('ldr_live_nope_nope');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('This API key was not accepted.').waitFor(WAIT);

    await page.getByLabel('API key').fill(user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Your runs' }).waitFor(WAIT);
    expect(await page.evaluate("sessionStorage.getItem('ladder.apiKey')")).toBe(user.key);
    expect(await page.evaluate("sessionStorage.getItem('ladder.username')")).toBe(user.username);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    expect(await page.context().cookies()).toEqual([]);
    expect(page.url()).not.toContain(user.key);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
    expect(await page.evaluate("sessionStorage.getItem('ladder.apiKey')")).toBeNull();
    expect(await page.evaluate("sessionStorage.getItem('ladder.username')")).toBeNull();
  });

  run('shows a new run in the list, then its nodes filling in live, and a node’s prompt', async (page) => {
    await signIn(page, ui.base, user.key);
    const id = await insertInstance(ui.database, { accountId: user.id, author: user.username, slug: 'live-ladder', stepsTotal: 2 });
    await appendEvents(ui.database, id, [{ type: 'instance.started' }]);
    const link = page.getByRole('link', { name: `${user.username}/live-ladder` });
    await link.waitFor(WAIT);
    await expect(page.locator(`tr[data-instance="${id}"]`).textContent()).resolves.toContain('running');
    await link.click();
    await page.getByRole('heading', { name: `Run of ${user.username}/live-ladder` }).waitFor(WAIT);
    await page.getByText('Waiting for the run to start…').waitFor(WAIT);

    await appendEvents(ui.database, id, [{ type: 'step.started', data: { step: 'judge', pass: 1, depth: 0 } }, nodeCompleted('judge', 1, 0, 1, true, 800)]);
    const first = page.getByRole('button', { name: /^Node 1 of judge: Succeeded, openai/ });
    await first.waitFor(WAIT);
    await appendEvents(ui.database, id, [nodeCompleted('judge', 1, 0, 2, false, 500)]);
    await page.getByRole('button', { name: /^Node 2 of judge: Pruned by its gate/ }).waitFor(WAIT);
    await expect(page.getByRole('listitem').filter({ hasText: 'Pruned by its gate' }).count()).resolves.toBeGreaterThan(0);

    // Keyboard: focus the node and press Enter.
    await first.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'judge · node 1 · pass 1' }).waitFor(WAIT);
    await expect(page.locator('#node-prompt').textContent()).resolves.toBe('Prompt of judge node 1');
    await expect(page.locator('#node-output').textContent()).resolves.toBe('judge 1.0.1 says YES');

    // While the run goes on, the summary counts the step the timeline shows finished (the
    // instance row says 0 until its runner writes progress).
    const stepsRun = page.locator('dl.facts dt', { hasText: 'Steps run' }).locator('xpath=following-sibling::dd[1]');
    await expect(stepsRun.textContent()).resolves.toBe('0 of 2');
    await appendEvents(ui.database, id, [{ type: 'step.completed', data: { step: 'judge', pass: 1, depth: 0, survivors: [1] } }]);
    await page.getByText('1 of 2 kept').waitFor(WAIT);
    await expect.poll(() => stepsRun.textContent(), WAIT).toBe('1 of 2');
    await expect(page.locator('.page-head .badge').textContent()).resolves.toContain('running');
    await page.screenshot({ path: path.join(SHOTS, 'run-live-steps.png'), fullPage: true });
    await finishInstance(ui.database, id, { status: 'completed', answer: 'The answer is 42.' });
    await appendEvents(ui.database, id, [{ type: 'instance.completed' }]);
    await page.getByRole('heading', { name: 'Answer' }).waitFor(WAIT);
    await expect(page.locator('pre.answer').textContent()).resolves.toBe('The answer is 42.');
    await expect(page.locator('.page-head .badge').textContent()).resolves.toContain('completed');
    await expect(page.getByText('1 of 2 kept').isVisible()).resolves.toBe(true);
  });

  run('cancels a running instance', async (page) => {
    const id = await insertInstance(ui.database, { accountId: user.id, author: user.username, slug: 'slow-ladder' });
    await appendEvents(ui.database, id, [{ type: 'instance.started' }, { type: 'step.started', data: { step: 'think', pass: 1, depth: 0 } }]);
    await signIn(page, ui.base, user.key, `#/runs/${id}`);
    const cancel = page.getByRole('button', { name: 'Cancel run' });
    await cancel.waitFor(WAIT);
    await cancel.click();
    await expect.poll(() => ui.requests.filter((r) => r === `POST /v1/pipelines/instances/${id}/cancel`).length, WAIT).toBe(1);
    const [row] = await ui.database.query<{ cancel_requested_at: Date | null; status: string }>('select cancel_requested_at, status from instances where id = $1', [id]);
    expect(row!.cancel_requested_at !== null || row!.status === 'cancelled').toBe(true);

    // The runner notices and ends the run; the page follows.
    await finishInstance(ui.database, id, { status: 'cancelled', error: { status: 499, type: 'invalid_request_error', code: 'run_cancelled', message: 'The run was cancelled by its owner.' } });
    await appendEvents(ui.database, id, [{ type: 'instance.cancelled' }]);
    await page.getByRole('heading', { name: 'Cancelled' }).waitFor(WAIT);
    await expect(cancel.isHidden()).resolves.toBe(true);
  });

  run('locates an invalid config’s errors in the playground, then runs the fixed config to completion', async (page) => {
    await ui.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: ui.fake.apiKey } });
    await signIn(page, ui.base, user.key, '#/playground');
    await page.getByRole('heading', { name: 'Playground' }).waitFor(WAIT);
    const editor = page.getByLabel('Ladder config (YAML or JSON)');
    // "Save as" starts as the signed-in account's own ladder, named after the example config.
    await expect.poll(() => page.getByLabel('Save as ladder').inputValue(), WAIT).toBe(`${user.username}/draft-and-judge`);
    const broken = [
      'name: Typo',
      'exit: answer',
      'steps:',
      '  - id: draft',
      '    name: Draft',
      '    type: normal',
      '    fields:',
      '      - { name: Question, type: text, from: input.context }',
      '  - id: answer',
      '    name: Answer',
      '    type: normal',
      '    fields:',
      '      - { name: Draft, type: ingest, from: { stepId: drfat } }',
      '',
    ].join('\n');
    await editor.fill(broken);
    const problem = page.getByRole('listitem').filter({ hasText: 'no step has id "drfat"' });
    await problem.waitFor(WAIT);
    await expect(problem.getByRole('button').textContent()).resolves.toBe('Line 13');
    await expect(editor.getAttribute('aria-invalid')).resolves.toBe('true');
    await problem.getByRole('button', { name: 'Line 13' }).click();
    // The code editor mirrors its selection into the page's.
    await expect.poll(() => page.evaluate<string>('document.getSelection().toString()'), WAIT).toBe('      - { name: Draft, type: ingest, from: { stepId: drfat } }');
    await expect(page.evaluate<string>("document.activeElement.getAttribute('aria-labelledby')")).resolves.toBe('config-label');

    await editor.fill(broken.replace('drfat', 'draft'));
    await page.getByText('Valid: ready to save and run.').waitFor(WAIT);
    await page.getByLabel('Save as ladder').fill(`${user.username}/playground-demo`);
    await page.getByLabel('Input (the user message)').fill('Why is the sky blue?');
    await page.getByRole('button', { name: 'Save and run' }).click();
    await page.getByRole('heading', { name: 'Completed' }).waitFor(WAIT);
    await expect(page.locator('#run-answer').textContent()).resolves.toMatch(/^echo: Draft: echo: Question: Why is the sky blue\?/);
    const saves = () => ui.requests.filter((r) => r === `PUT /v1/${user.username}/playground-demo`).length;
    expect(saves()).toBe(1);

    // The same config again: it runs version 1 again instead of saving a version 2.
    await page.getByRole('button', { name: 'Save and run' }).click();
    await page.getByText('Version 1 (unchanged, not saved again)', { exact: false }).waitFor(WAIT);
    expect(saves()).toBe(1);
    const [versions] = await ui.database.query<{ n: number }>(
      'select count(*)::int as n from ladder_versions v join ladders l on l.id = v.ladder_id where l.slug = $1', ['playground-demo'],
    );
    expect(versions!.n).toBe(1);
    await page.screenshot({ path: path.join(SHOTS, 'playground-unchanged.png'), fullPage: true });

    await page.getByRole('link', { name: 'Open its timeline' }).click();
    await page.getByRole('heading', { name: `Run of ${user.username}/playground-demo` }).waitFor(WAIT);
    await page.getByRole('button', { name: /^Node 1 of answer: Succeeded/ }).waitFor(WAIT);
    await expect(page.locator('.page-head .badge').textContent()).resolves.toContain('completed');
  });

  run('lays the timeline out for a phone screen', async (page) => {
    const id = await insertInstance(ui.database, { accountId: user.id, author: user.username, slug: 'phone' });
    await appendEvents(ui.database, id, [{ type: 'instance.started' }, { type: 'step.started', data: { step: 'draft', pass: 1, depth: 0 } }, nodeCompleted('draft', 1, 0, 1)]);
    await signIn(page, ui.base, user.key, `#/runs/${id}`);
    await page.getByRole('button', { name: /^Node 1 of draft/ }).waitFor(WAIT);
    // Nothing but the timeline itself scrolls sideways.
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBeLessThanOrEqual(0);
  }, { width: 390, height: 844 });
});
