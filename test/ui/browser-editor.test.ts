// The playground's code editor in a real Chromium: a mistake typed into a ladder is underlined at
// its line with the validator's message on hover and in the list below; completion offers the
// document's step ids; the keyboard can leave the editor; its styles pass the page's CSP; the
// fixed ladder still runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../helpers/build.js';
import { browserMissing, launchBrowser, onPage, signIn, startUiApp, type UiApp } from './browser.js';

const WAIT = { timeout: 15_000 };
const LADDER = [
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
  '      - { name: Draft, type: ingest, from: { stepId: draft } }',
  '',
].join('\n');

describe.skipIf(browserMissing)('the playground’s code editor, in Chromium', () => {
  let ui: UiApp;
  let browser: Browser;
  let user: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    ui = await startUiApp();
    browser = await launchBrowser();
    user = await createUser(ui.app);
    await ui.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: ui.fake.apiKey } });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await ui?.close();
  });

  const run = (name: string, body: (page: Page) => Promise<void>, viewport?: { width: number; height: number }) =>
    it(name, () => onPage(browser, name, body, viewport), 90_000);

  /** Opens the playground with LADDER in the editor, the cursor just after `stepId: draft` on line 13. */
  async function openWithLadder(page: Page) {
    // Every style element or script the page's CSP refuses. Not style attributes: Chrome's own
    // editing adds some when text replaces a selection across highlighted lines; refused, they
    // change nothing, as CodeMirror redraws those lines from its document.
    await page.addInitScript(`window.refused = [];
      document.addEventListener('securitypolicyviolation', (e) => {
        if (e.effectiveDirective !== 'style-src-attr') refused.push(e.effectiveDirective + ' ' + e.blockedURI + ' ' + e.sample);
      });`);
    await signIn(page, ui.base, user.key, '#/playground');
    const editor = page.getByRole('textbox', { name: 'Ladder config (YAML or JSON)' });
    await editor.fill(LADDER);
    await page.getByText('Valid: ready to save and run.').waitFor(WAIT);
    await page.keyboard.press('Control+End');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('End');
    for (let i = 0; i < ' } }'.length; i++) await page.keyboard.press('ArrowLeft');
    return { editor, refused: () => page.evaluate<string[]>('window.refused') };
  }

  run('underlines a typed mistake at its line, with the message on hover and in the list, then completes the step id and runs', async (page) => {
    const { editor, refused } = await openWithLadder(page);
    for (let i = 0; i < 'draft'.length; i++) await page.keyboard.press('Backspace');
    await page.keyboard.type('drfat');

    const message = 'steps[1].fields[0].from.stepId: no step has id "drfat"';
    const problem = page.getByRole('listitem').filter({ hasText: message });
    await problem.waitFor(WAIT);
    await expect(problem.getByRole('button').textContent()).resolves.toBe('Line 13');
    await expect(editor.getAttribute('aria-invalid')).resolves.toBe('true');
    // The underline is on line 13 and nowhere else.
    const underlined = page.locator('.cm-line:has(.cm-lintRange-error)');
    await expect.poll(() => underlined.count(), WAIT).toBe(1);
    await expect(underlined.textContent()).resolves.toBe('      - { name: Draft, type: ingest, from: { stepId: drfat } }');
    await expect(page.locator('.cm-gutterElement', { hasText: /^13$/ }).boundingBox().then((b) => Math.round(b!.y)))
      .resolves.toBe(await underlined.boundingBox().then((b) => Math.round(b!.y)));
    await page.locator('.cm-lintRange-error').hover();
    await expect(page.locator('.cm-tooltip-hover .cm-diagnostic').textContent()).resolves.toBe(message);

    // Completion offers the document's step ids for the word being typed.
    await editor.focus();
    for (let i = 0; i < 'drfat'.length; i++) await page.keyboard.press('Backspace');
    await page.keyboard.type('dr');
    const options = page.getByRole('listbox').getByRole('option');
    await expect.poll(() => options.allTextContents(), WAIT).toEqual(['draftstep']);
    await options.first().click();
    await page.getByText('Valid: ready to save and run.').waitFor(WAIT);
    await expect(page.locator('.cm-lintRange-error').count()).resolves.toBe(0);
    await expect(editor.getAttribute('aria-invalid')).resolves.toBe('false');
    await expect(page.locator('.cm-line').nth(12).textContent()).resolves.toBe('      - { name: Draft, type: ingest, from: { stepId: draft } }');

    await page.getByLabel('Save as ladder').fill(`${user.username}/editor-demo`);
    await page.getByRole('button', { name: 'Save and run' }).click();
    await page.getByRole('heading', { name: 'Completed' }).waitFor(WAIT);
    await expect(page.locator('#run-answer').textContent()).resolves.toMatch(/^echo: Draft: echo: Question: /);

    // CodeMirror's own styles (a flex column) were admitted by the page's nonce, and nothing was refused.
    await expect(page.evaluate<string>("getComputedStyle(document.querySelector('.cm-editor')).display")).resolves.toBe('flex');
    await expect(refused()).resolves.toEqual([]);
  });

  run('lets the keyboard leave the editor: Tab indents, Escape then Tab moves on', async (page) => {
    const { editor } = await openWithLadder(page);
    const focusedIsEditor = () => page.evaluate<boolean>("document.activeElement?.getAttribute('aria-labelledby') === 'config-label'");
    await page.keyboard.press('Home');
    await page.keyboard.press('Tab');
    await expect(focusedIsEditor()).resolves.toBe(true);
    await expect(page.locator('.cm-line').nth(12).textContent()).resolves.toBe('        - { name: Draft, type: ingest, from: { stepId: draft } }');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Tab');
    await expect(focusedIsEditor()).resolves.toBe(false);
    await expect(editor.getAttribute('aria-describedby')).resolves.toBe('config-help config-status');
  });

  run('highlights JSON as JSON, and YAML again when the text turns back, on a phone screen without sideways scrolling', async (page) => {
    const { editor } = await openWithLadder(page);
    // YAML's keys (five "name:" in LADDER) are definitions; JSON's are plain property names.
    const yamlKey = page.locator('.tok-propertyName.tok-definition', { hasText: /^name$/ });
    await expect.poll(() => yamlKey.count(), WAIT).toBe(5);
    await editor.fill(JSON.stringify({ name: 'Json', exit: 'a', steps: [{ id: 'a', name: 'A', type: 'normal' }] }, null, 2));
    await page.getByText('Valid: ready to save and run.').waitFor(WAIT);
    await expect(page.locator('.tok-propertyName:not(.tok-definition)', { hasText: /^"name"$/ }).count()).resolves.toBe(2);
    await expect(yamlKey.count()).resolves.toBe(0);
    await editor.fill(LADDER);
    await expect.poll(() => yamlKey.count(), WAIT).toBe(5);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBeLessThanOrEqual(0);
  }, { width: 390, height: 844 });
});
