// `npm run screenshot`: docs/images/timeline.png, the timeline of a run of the published
// "Gated tree of thought" example ladder, and docs/screenshots/playground-editor.png, the
// playground's editor showing a mistake at its line. The real service (HTTPS, embedded database, in a
// temporary data directory) runs the ladder against a local fake OpenAI whose scripted replies
// take realistic times and make the judge's gate keep two thoughts of three; headless Chromium
// signs in to the web UI and photographs the run's page.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { Agent, fetch } from 'undici';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { startFakeOpenAI } from '../test/fakes/vendors.js';
import { gatedTreeOfThought } from '../test/ladders/examples.js';

const OUT = path.resolve(process.argv[2] ?? 'docs/images/timeline.png');
const EDITOR_OUT = path.resolve('docs/screenshots/playground-editor.png');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ADMIN_TOKEN = 'screenshot-admin-token-0123456789';

async function main(): Promise<void> {
  const fake = await startFakeOpenAI();
  const reply = (content: string, delayMs: number) => ({ kind: 'reply' as const, content, delayMs, usage: { prompt: 180, completion: content.length * 2 } });
  fake.script(
    reply('Split the problem: the sky scatters short wavelengths more (Rayleigh scattering).', 1400),
    reply('Consider the spectrum of sunlight and how the eye weighs it.', 1900),
    reply('Maybe the sky reflects the ocean.', 1100),
    reply('YES', 700),
    reply('YES', 950),
    reply('NO', 600),
    reply('Sunlight is scattered by air molecules, and blue light is scattered most, so the sky looks blue.', 1600),
  );
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-screenshot-'));
  const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'warn', PROVIDER_BASE_URL_OPENAI: fake.baseUrl, ALLOW_PRIVATE_ENDPOINTS: 'true' });
  const server = await startServer(config);
  const dispatcher = new Agent({ connect: { ca: readFileSync(path.join(dataDir, 'tls', 'localhost.crt'), 'utf8') } });
  const call = async (method: string, url: string, token: string, body?: unknown) => {
    const res = await fetch(`${server.url}${url}`, {
      method, dispatcher, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
    return { res, body: (await res.json()) as Record<string, any> };
  };
  try {
    await call('POST', '/v1/admin/accounts', ADMIN_TOKEN, { username: 'demo' });
    const { body: key } = await call('POST', '/v1/admin/accounts/demo/api-keys', ADMIN_TOKEN, { name: 'screenshot' });
    await call('POST', '/v1/providers', key.key, { provider: 'openai', api_key: fake.apiKey });
    await call('PUT', '/v1/demo/tree-of-thought', key.key, { config: gatedTreeOfThought });
    const messages = [{ role: 'user', content: 'Why is the sky blue?' }];
    const id = await startRun(call, key.key as string, messages);

    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking'] });
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1200, height: 900 }, deviceScaleFactor: 1, colorScheme: 'light' });
    const page = await context.newPage();
    await page.goto(`${server.url}/ui/#/runs/${id}`);
    await page.getByLabel('API key').fill(key.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Answer' }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: /^Node 3 of judge/ }).click();
    await page.getByRole('heading', { name: /judge · node 3/ }).waitFor();
    await page.locator('main').screenshot({ path: OUT });
    console.log(`wrote ${path.relative(process.cwd(), OUT)}`);
    await photographEditor(page, EDITOR_OUT);
    console.log(`wrote ${path.relative(process.cwd(), EDITOR_OUT)}`);
    await browser.close();
  } finally {
    await dispatcher.close();
    await server.close();
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The playground with a misspelt step id: underlined at its line, its message on hover and listed below. */
async function photographEditor(page: Page, out: string): Promise<void> {
  await page.goto(page.url().replace(/#.*$/, '#/playground'));
  await page.getByRole('textbox', { name: 'Ladder config (YAML or JSON)' }).fill(`name: Draft and judge
description: Drafts answers, then writes the best one.
exit: answer
knobs:
  drafts:
    name: Drafts
    type: nodes
    input: slider
    steps:
      - { title: One, value: 1 }
      - { title: Two, value: 2, default: true }
      - { title: Four, value: 4 }
steps:
  - id: draft
    name: Draft
    type: normal
    nodes: "{{knobs.drafts}}"
    fields:
      - { name: Question, type: text, from: input.context }
    systemPrompt: Answer the question.
  - id: answer
    name: Answer
    type: normal
    fields:
      - { name: Question, type: text, from: input.context }
      - { name: Draft, type: multi_ingest, from: { stepId: drafts } }
    systemPrompt: Write the best answer from the drafts.
`);
  await page.getByRole('listitem').filter({ hasText: 'no step has id "drafts"' }).waitFor();
  await page.locator('.cm-lintRange-error').hover();
  await page.locator('.cm-tooltip-hover .cm-diagnostic').waitFor();
  // A clip of the page, not an element's screenshot, which would move away from the hover.
  await page.screenshot({ path: out, clip: (await page.locator('main').boundingBox())! });
}

type Call = (method: string, url: string, token: string, body?: unknown) => Promise<{ res: { headers: { get(name: string): string | null } }; body: Record<string, any> }>;

/** In the background where the service offers it (then waits for the end), else synchronously. */
async function startRun(call: Call, key: string, messages: unknown[]): Promise<string> {
  try {
    const { body } = await call('POST', '/v1/pipelines/instances', key, { author: 'demo', template: 'tree-of-thought', model: 'gpt-4o-mini', messages });
    for (let i = 0; i < 600; i++) {
      const { body: instance } = await call('GET', `/v1/pipelines/instances/${body.instanceId}`, key);
      if (['completed', 'failed', 'cancelled'].includes(instance.status)) return body.instanceId;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the background run did not finish');
  } catch (error) {
    if (!/: 404 /.test((error as Error).message)) throw error;
    const { res } = await call('POST', '/v1/demo/tree-of-thought/chat/completions', key, { model: 'gpt-4o-mini', messages });
    return res.headers.get('x-ladder-instance')!;
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
