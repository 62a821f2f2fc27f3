// Every shell and JSON example of README.md and docs/ is run or checked here, against the
// built server and the ladders of examples/, so that no example can rot: each block is
// classified in EXAMPLES below (a block nobody classified fails the test, and so does an
// entry whose block is gone), shell blocks run in bash as a reader would paste them, and what
// they print is compared with what the page says. The few that cannot run here say why.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import https from 'node:https';
import { createServer } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/ladders/language/parse-text.js';
import { validateConfig } from '../../src/ladders/language/validator.js';
import { parsePrices } from '../../src/pricing/prices-file.js';
import { assertEndpointAllowed } from '../../src/providers/ssrf.js';
import { ApiError } from '../../src/errors.js';
import { SaveLadderBodySchema } from '../../src/schemas/ladders.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { spawnServer, type SpawnedServer } from '../helpers/spawned-server.js';
import { blocksOf, docJson, httpAnswer, isExample, jsonValues, occursIn, PAGES, shapeDifferences, type Block } from './doc-blocks.js';

type Kind = { run: string } | { check: string } | { skip: string };
type Config = Record<string, any>;

/** The example ladder with a step or knob fragment in place of its namesake (a step nobody has is added). */
function withFragment(ladder: Config, fragment: Config): Config[] {
  const copy = structuredClone(ladder);
  if (fragment.knobs) {
    const [name] = Object.keys(fragment.knobs);
    return copy.knobs?.[name!] ? [{ ...copy, knobs: { ...copy.knobs, ...fragment.knobs } }] : [];
  }
  if (typeof fragment.id !== 'string') return [];
  const replace = (steps: Config[]): boolean => {
    const at = steps.findIndex((s) => s.id === fragment.id);
    if (at !== -1) steps[at] = fragment;
    return at !== -1 || steps.some((s) => Array.isArray(s.steps) && replace(s.steps));
  };
  if (!replace(copy.steps)) copy.steps.push(fragment);
  return [copy];
}

/** [page, a text the block contains (`= text`: the block is exactly that), what the test does with it]. */
const EXAMPLES: Array<[string, string, Kind]> = [
  ['README.md', '= npm ci && npm start', { skip: 'installs and starts the service: this test starts the same built server' }],
  ['README.md', 'npm ci && npm test', { skip: 'installs and runs the whole suite, this test among it' }],
  ['README.md', 'export ADMIN_TOKEN=$(openssl rand -hex 24)', { skip: 'starts the service with an admin token: this test starts it so' }],
  ['README.md', 'export ADMIN_TOKEN=...', { run: 'quickstart: account and key' }],
  ['README.md', 'export LADDER_KEY=ldr_live_...', { run: 'quickstart: provider key and chat' }],
  ['README.md', 'npx ladder-admin create-account alice', { run: 'command line bootstrap' }],
  ['README.md', 'ALLOW_PRIVATE_ENDPOINTS=true ADMIN_TOKEN=$ADMIN_TOKEN npm start', { skip: 'starts the service: this test starts it with ALLOW_PRIVATE_ENDPOINTS=true' }],
  ['README.md', '"endpoint": "http://127.0.0.1:11434/v1"', { run: 'local model' }],
  ['README.md', '"endpoint http://127.0.0.1:11434 uses plain http', { check: 'local model refused' }],
  ['README.md', '= npx ladder-admin push-ladder alice examples/*.yaml', { run: 'push the examples' }],
  ['README.md', '"stream": true', { run: 'streaming' }],
  ['README.md', '"scope": "manage"', { run: 'webhooks: a manage key' }],
  ['README.md', '$BASE/v1/webhooks', { run: 'webhooks' }],
  ['README.md', '"Missing required field: model."', { check: 'error envelope' }],
  ['README.md', 'DATABASE_URL=postgres://user:password@db.example.com', { skip: 'needs that PostgreSQL server (the suite runs on PostgreSQL through TEST_DATABASE_URL)' }],
  ['README.md', 'docker build -t ladder-service .', { skip: 'needs a Docker engine' }],
  ['README.md', 'docker compose up -d', { skip: 'needs a Docker engine' }],
  ['docs/observability.md', 'jaegertracing/all-in-one', { skip: 'needs a Docker engine' }],
  ['docs/observability.md', 'otel/opentelemetry-collector-contrib', { skip: 'needs a Docker engine' }],
  ['docs/observability.md', 'OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318', { skip: 'starts the service with traces on: test/telemetry/otlp-export.test.ts starts the built server so, against a fake collector' }],
  ['docs/ladder-language.md', '"name": "Draft and refine"', { check: 'ladder config' }],
  ['docs/ladder-language.md', '"strategy": "constrained"', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '"executionBudget"', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '"thoughts": {', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '"id": "think"', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '"id": "critique"', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '"id": "views"', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '{ "name": "Critique", "type": "multi_ingest"', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '"name": "Previous answer"', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '"id": "judge"', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '"name": "Verdict"', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '"passes": {', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '"name": "Earlier answer"', { check: 'ladder fragment' }],
  ['docs/ladder-language.md', '"id": "deepen"', { check: 'ladder fragment' }],
  ['docs/ladders-api.md', '"usage_visibility": "private | unlisted | public"', { check: 'save body' }],
  ['docs/ladders-api.md', 'npx ladder-admin push-ladder <username>', { skip: 'a usage synopsis with placeholders; README runs the command itself' }],
  ['docs/ladders-api.md', '"knobs": { "thoughts": 5 }', { run: 'run a ladder' }],
  ['docs/pipelines-events.md', 'curl -N', { run: 'event stream' }],
  ['docs/pipelines.md', "-H 'Idempotency-Key: report-2024-06-01'", { run: 'start a background run' }],
  ['docs/pipelines.md', '"object": "pipeline.instance"', { check: 'instance' }],
  ['docs/pipelines.md', 'started=$(curl', { run: 'polling loop' }],
  ['docs/pipelines.md', '"object": "pipeline.trace"', { check: 'trace' }],
  ['docs/pipelines.md', '"has_more": true', { check: 'instance list' }],
  ['docs/pipelines.md', '/rerun', { run: 'rerun' }],
  ['docs/quotas.md', '"group": "gpt-4o-mini"', { check: 'usage report' }],
  ['docs/quotas.md', '"my-finetune"', { check: 'prices file' }],
  ['docs/accounts.md', '"code": "insufficient_scope"', { check: 'use key refused' }],
  ['docs/webhooks.md', '$BASE/v1/webhooks', { run: 'register an endpoint' }],
  ['docs/webhooks.md', '"object": "webhook_endpoint"', { check: 'endpoint' }],
  ['docs/webhooks.md', '"type": "instance.completed"', { check: 'message' }],
  ['docs/webhooks.md', '"object": "webhook.delivery"', { check: 'delivery log' }],
];

const examples = PAGES.flatMap(blocksOf).filter(isExample);
const matches = (b: Block, file: string, text: string) => b.file === file && (text.startsWith('= ') ? b.text === text.slice(2) : b.text.includes(text));
const entryOf = (b: Block) => EXAMPLES.filter(([file, text]) => matches(b, file, text));
const block = (file: string, text: string): Block => {
  const found = examples.filter((b) => matches(b, file, text));
  if (found.length !== 1) throw new Error(`${file}: ${found.length} example blocks contain ${JSON.stringify(text)}`);
  return found[0]!;
};
/** The block that follows `b` on its page (the output a page shows after a command). */
const next = (b: Block): Block => {
  const all = blocksOf(b.file);
  return all[all.findIndex((x) => x.line === b.line) + 1]!;
};
const done = new Set<Block>();

describe('every shell and JSON example of README.md and docs/', () => {
  it('is classified exactly once, and every entry names a block that exists', () => {
    const unclassified = examples.filter((b) => entryOf(b).length !== 1).map((b) => `${b.file}:${b.line} (${entryOf(b).length} entries): ${b.text.slice(0, 80)}`);
    expect(unclassified).toEqual([]);
    const stale = EXAMPLES.filter(([file, text]) => !examples.some((b) => matches(b, file, text))).map(([file, text]) => `${file}: ${text}`);
    expect(stale).toEqual([]);
  });
});

describe('the examples, run against the built server and examples/', { timeout: 300_000 }, () => {
  const ADMIN_TOKEN = 'docs-examples-admin-token-0123456789';
  let server: SpawnedServer;
  let openai: FakeVendor;
  let ollama: FakeVendor;
  let receivers: WebhookReceiver[] = [];
  let base: string;
  let ca: string;
  let caText: string;
  const env: Record<string, string> = {};

  beforeAll(async () => {
    // The README's placeholder key is the one the fake vendor accepts, so the commands run as printed.
    [openai, ollama] = await Promise.all([startFakeOpenAI({ apiKey: 'sk-...' }), startFakeOpenAI({ apiKey: 'local' })]);
    receivers = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as { port: number }).port;
    probe.close();
    await once(probe, 'close');
    server = await spawnServer({ PORT: String(port), ADMIN_TOKEN, LOG_LEVEL: 'info', PROVIDER_BASE_URL_OPENAI: openai.baseUrl, WORKER_CONCURRENCY: '2' });
    base = await server.url();
    ca = path.join(server.dataDir, 'tls', 'localhost.crt');
    caText = readFileSync(ca, 'utf8');
    // The environment of the reader's terminal: the same settings as the server's, for the CLI too.
    Object.assign(env, { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', DATA_DIR: server.dataDir, PORT: String(port), ADMIN_TOKEN, BASE: base, CA: ca, OPENAI_API_KEY: 'sk-...' });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await Promise.all([openai?.close(), ollama?.close(), ...receivers.map((r) => r.close())]);
  });

  /** Runs a block in bash as pasted, with only the substitutions a reader makes (their URL, their files). */
  function sh(b: Block, extra: Record<string, string> = {}, edit: (text: string) => string = (t) => t): Promise<{ code: number | null; out: string; err: string }> {
    done.add(b);
    const text = edit(b.text).replaceAll('https://127.0.0.1:8443', base).replaceAll('data/tls/localhost.crt', ca);
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-e', '-c', text], { env: { ...env, ...extra }, cwd: process.cwd(), timeout: 120_000 });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, out, err }));
    });
  }

  async function api(method: string, route: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const req = https.request(`${base}${route}`, { method, ca: caText, agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, resolve);
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
    let text = '';
    for await (const chunk of res) text += String(chunk);
    return { status: res.statusCode!, body: JSON.parse(text) };
  }

  let instanceId: string;

  it('README, quickstart: creates the account and the key, stores the provider key, chats', async () => {
    const first = block('README.md', 'export ADMIN_TOKEN=...');
    // "the same value as above": the reader's terminal has it already.
    const made = await sh(first, {}, (t) => t.replace(/^export ADMIN_TOKEN=\.\.\..*$/m, ''));
    expect(made.code, made.err).toBe(0);
    const [account, key] = jsonValues(made.out) as [Record<string, unknown>, Record<string, unknown>];
    expect(account).toEqual({ id: expect.any(String), username: 'alice', created_at: expect.any(String) });
    // The page: `# -> {"id": "...", "key": "ldr_live_...", ...}`
    expect(key).toMatchObject({ id: expect.any(String), key: expect.stringMatching(/^ldr_live_/) });
    env.LADDER_KEY = key.key as string;

    const chat = await sh(block('README.md', 'export LADDER_KEY=ldr_live_...'), {}, (t) => t.replace(/^export LADDER_KEY=.*$/m, ''));
    expect(chat.code, chat.err).toBe(0);
    const [connection, completion] = jsonValues(chat.out) as Array<Record<string, any>>;
    expect(connection).toMatchObject({ provider: 'openai', label: 'work', key_prefix: 's', endpoint: null });
    expect(completion).toMatchObject({ object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ message: { role: 'assistant', content: 'echo: Say hello' } }] });
  });

  it('README, streaming: the curl streams chunks of the kinds and shapes printed, in that order, and ends with [DONE]', async () => {
    const curl = block('README.md', '"stream": true');
    const streamed = await sh(curl);
    expect(streamed.code, streamed.err).toBe(0);
    // The page's events: JSON, where `, ...,` stands for the first chunk's members left out.
    const events = (text: string) => [...text.matchAll(/^data: (.*)$/gm)].map(([, data]) => (data === '[DONE]' ? data : (JSON.parse(data!.replace(/,\s*\.\.\.\s*,/g, ',')) as Record<string, any>)));
    const sent = events(streamed.out);
    const shown = events(next(curl).text);
    expect(streamed.out).toMatch(/\ndata: \[DONE\]\n\n$/);
    expect(shown.at(-1)).toBe('[DONE]');
    const chunks = sent.slice(0, -1) as Array<Record<string, any>>;
    const printed = shown.slice(0, -1) as Array<Record<string, any>>;
    // A chunk's kind: which delta members, which finish, whether usage; the page shows each kind once, in the order sent.
    const kind = (c: Record<string, any>) => JSON.stringify([c.choices.map((x: any) => [Object.keys(x.delta).sort(), x.finish_reason]), c.usage === null ? null : Object.keys(c.usage).sort()]);
    const kinds = chunks.map(kind).filter((k, i, all) => k !== all[i - 1]);
    expect(kinds).toEqual(printed.map(kind));
    expect(shapeDifferences(printed[0], chunks[0])).toEqual([]);
    for (const chunk of chunks) {
      const shownAs = printed.find((p) => kind(p) === kind(chunk))!;
      const members = Object.fromEntries(Object.keys(shownAs).map((k) => [k, chunk[k]]));
      expect(shapeDifferences(shownAs, members)).toEqual([]);
      expect(chunk).toMatchObject({ id: chunks[0]!.id, object: 'chat.completion.chunk', model: 'gpt-4o-mini' });
    }
    expect(chunks[0]!.id).toMatch(/^ldr-chat-/);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('echo: Hi');
    expect(openai.requests.at(-1)!.body).toMatchObject({ stream: true, messages: [{ role: 'user', content: 'Hi' }] });
  });

  it('README, command line: bootstraps an account while the server runs (through its admin API), and pushes the examples', async () => {
    // A second reader takes the other path: the same commands for another username.
    const boot = await sh(block('README.md', 'npx ladder-admin create-account alice'), {}, (t) => t.replaceAll('alice', 'carol'));
    expect(boot.code, boot.err).toBe(0);
    expect(boot.out).toMatch(/^id: [0-9a-f-]{36}\nusername: carol\n/);
    expect(boot.out).toContain('"key":"ldr_live_');
    const slugs = readdirSync('examples').filter((f) => f.endsWith('.yaml')).map((f) => f.replace(/\.yaml$/, ''));
    for (const slug of slugs) expect(boot.out).toMatch(new RegExp(`\\n${slug} +`));

    const pushed = await sh(block('README.md', '= npx ladder-admin push-ladder alice examples/*.yaml'));
    expect(pushed.code, pushed.err).toBe(0);
    expect(pushed.out.split('\n')[0]).toMatch(/^SLUG +NAME +VERSION/);
    for (const slug of slugs) expect(pushed.out).toMatch(new RegExp(`\\n${slug} +.* 1 +private`));
  });

  it('README, local models: a custom endpoint on this machine serves the model, and without the setting the refusal is as printed', async () => {
    const local = await sh(block('README.md', '"endpoint": "http://127.0.0.1:11434/v1"'), {}, (t) => t.replace('http://127.0.0.1:11434/v1', ollama.baseUrl));
    expect(local.code, local.err).toBe(0);
    const [connection, completion] = jsonValues(local.out) as Array<Record<string, any>>;
    expect(connection).toMatchObject({ provider: 'custom', endpoint: ollama.baseUrl });
    expect(completion).toMatchObject({ choices: [{ message: { content: 'echo: Say hello' } }] });
    expect(ollama.requests.at(-1)!.body).toMatchObject({ model: 'llama3.2' });

    const printed = block('README.md', '"endpoint http://127.0.0.1:11434 uses plain http');
    done.add(printed);
    const refusal = await assertEndpointAllowed('http://127.0.0.1:11434/v1', false).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).toBody()).toEqual(docJson(printed.text));
  });

  it('README, errors: the envelope printed is the answer to a chat without a model', async () => {
    const printed = block('README.md', '"Missing required field: model."');
    done.add(printed);
    const res = await api('POST', '/v1/chat/completions', env.LADDER_KEY!, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(docJson(printed.text));
  });

  it('docs/accounts.md: the 403 printed is the answer to a `use` key on a management route', async () => {
    const printed = block('docs/accounts.md', '"code": "insufficient_scope"');
    done.add(printed);
    // The quickstart's key was created without a scope: `use`.
    const res = await api('GET', '/v1/api-keys', env.LADDER_KEY!);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(docJson(printed.text));
  });

  it('docs/ladders-api.md: the save body has the schema\'s members, and the run body runs an example ladder', async () => {
    const save = block('docs/ladders-api.md', '"usage_visibility": "private | unlisted | public"');
    done.add(save);
    expect(Object.keys(docJson(save.text) as object).sort()).toEqual(Object.keys(SaveLadderBodySchema.properties).sort());
    const run = block('docs/ladders-api.md', '"knobs": { "thoughts": 5 }');
    done.add(run);
    const res = await api('POST', '/v1/alice/gated-tree-of-thought/chat/completions', env.LADDER_KEY!, docJson(run.text));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.object).toBe('chat.completion');
  });

  it('docs/pipelines.md: starts a background run as printed, reads, traces and lists it in the shapes printed', async () => {
    const start = block('docs/pipelines.md', "-H 'Idempotency-Key: report-2024-06-01'");
    const started = await sh(start);
    expect(started.code, started.err).toBe(0);
    const answer = httpAnswer(started.out);
    const printed = httpAnswer(next(start).text);
    expect(answer.status).toBe(printed.status);
    for (const a of [answer, printed]) expect(a.headers.location).toBe(`/v1/pipelines/instances/${a.body.instanceId}`);
    expect(shapeDifferences(printed.body, answer.body)).toEqual([]);
    expect(answer.body.status).toBe(printed.body.status);
    instanceId = answer.body.instanceId;

    let instance: { status: string } = { status: 'pending' };
    for (let i = 0; i < 200 && !['completed', 'failed', 'cancelled'].includes(instance.status); i++) {
      await new Promise((r) => setTimeout(r, 100));
      instance = (await api('GET', `/v1/pipelines/instances/${instanceId}`, env.LADDER_KEY!)).body;
    }
    expect(instance).toMatchObject({ status: 'completed', template: 'gated-tree-of-thought', knobs: { thoughts: 3 } });
    for (const [text, route] of [
      ['"object": "pipeline.instance"', `/v1/pipelines/instances/${instanceId}`],
      ['"object": "pipeline.trace"', `/v1/pipelines/instances/${instanceId}/trace`],
      ['"has_more": true', '/v1/pipelines/instances'],
    ] as const) {
      const shown = block('docs/pipelines.md', text);
      done.add(shown);
      const res = await api('GET', route, env.LADDER_KEY!);
      expect(res.status).toBe(200);
      expect(shapeDifferences(docJson(shown.text), res.body), text).toEqual([]);
    }
  });

  it('docs/pipelines-events.md: the event stream of a finished run replays its events and ends', async () => {
    const stream = await sh(block('docs/pipelines-events.md', 'curl -N'), { ID: instanceId });
    expect(stream.code, stream.err).toBe(0);
    expect(stream.out).toMatch(/^retry: 1000\n\nid: 1\nevent: instance\.started\n/);
    // Each event the page shows is sent, with the members the page shows ({...}: members left out).
    const events = (text: string) =>
      [...text.matchAll(/^event: (\S+)\ndata: (.*)$/gm)].map(([, name, data]) => {
        try {
          return { name: name!, data: JSON.parse(data!.replace(/\{\.\.\.\}/g, '{}')) as Record<string, unknown> };
        } catch {
          return { name: name!, data: null };
        }
      });
    const sent = events(stream.out);
    const shown = events(next(block('docs/pipelines-events.md', 'curl -N')).text);
    expect(shown.length).toBeGreaterThan(2);
    for (const event of shown) {
      const real = sent.find((e) => e.name === event.name);
      expect(real, event.name).toBeDefined();
      if (event.data) expect(Object.keys(real!.data!).sort(), event.name).toEqual(Object.keys(event.data).sort());
    }
  });

  it('docs/pipelines.md: the polling loop prints the answer, and stops with the error on a refused start or a bad key', async () => {
    const loop = block('docs/pipelines.md', 'started=$(curl');
    const ok = await sh(loop);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toMatch(/^echo: .+\n$/s);
    const badKey = await sh(loop, { LADDER_KEY: 'ldr_live_nothing' });
    expect(badKey).toMatchObject({ code: 0 });
    expect(JSON.parse(badKey.out)).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    const gone = await sh(loop, {}, (t) => t.replace('"template": "draft-and-refine"', '"template": "no-such-ladder"'));
    expect(JSON.parse(gone.out)).toMatchObject({ code: 'ladder_not_found' });
  });

  it('docs/pipelines.md: a rerun on version 4, whose last step alone changed, answers as printed and reuses every earlier call', async () => {
    // The page's story: the author saved new versions, the fourth changing only the last step's system prompt.
    const ladder = parseConfigText(readFileSync('examples/gated-tree-of-thought.yaml', 'utf8'), 'gated-tree-of-thought.yaml') as Config;
    let version = (await api('GET', '/v1/alice/gated-tree-of-thought', env.LADDER_KEY!)).body.version as number;
    for (let i = 0; i < 4 && version < 4; i++) {
      const config = version === 3 ? { ...ladder, steps: ladder.steps.map((s: Config) => (s.id === 'answer' ? { ...s, systemPrompt: 'Answer in one sentence, from the sound thoughts only.' } : s)) } : ladder;
      const saved = await api('PUT', '/v1/alice/gated-tree-of-thought', env.LADDER_KEY!, { config });
      expect(saved.status, JSON.stringify(saved.body)).toBe(200);
      version = saved.body.version;
    }
    expect(version).toBe(4);
    const calls = openai.requests.length;
    const rerun = block('docs/pipelines.md', '/rerun');
    const made = await sh(rerun, {}, (t) => t.replace('7d0f1c8e-5a43-4e1b-9a55-2f6f0c1e9b13', instanceId));
    expect(made.code, made.err).toBe(0);
    const answer = httpAnswer(made.out);
    const printed = httpAnswer(next(rerun).text);
    expect(answer.status).toBe(printed.status);
    for (const a of [answer, printed]) expect(a.headers.location).toBe(`/v1/pipelines/instances/${a.body.instanceId}`);
    expect(shapeDifferences(printed.body, answer.body)).toEqual([]);
    expect(answer.body.status).toBe(printed.body.status);

    let instance: Record<string, any> = { status: 'pending' };
    for (let i = 0; i < 200 && !['completed', 'failed', 'cancelled'].includes(instance.status as string); i++) {
      await new Promise((r) => setTimeout(r, 100));
      instance = (await api('GET', `/v1/pipelines/instances/${answer.body.instanceId}`, env.LADDER_KEY!)).body;
    }
    const trace = (await api('GET', `/v1/pipelines/instances/${answer.body.instanceId}/trace`, env.LADDER_KEY!)).body as { steps: Array<{ step: string; nodes: Array<{ reused: boolean }> }> };
    const nodes = (step: string) => trace.steps.filter((s) => s.step === step).flatMap((s) => s.nodes);
    expect(instance).toMatchObject({ status: 'completed', version: 4, rerun_of: instanceId, reused_calls: nodes('think').length + nodes('judge').length });
    expect([...nodes('think'), ...nodes('judge')].every((n) => n.reused)).toBe(true);
    expect(nodes('answer')).toMatchObject([{ reused: false }]);
    // Only the changed step went to the vendor.
    expect(openai.requests.length - calls).toBe(1);
    expect(JSON.stringify(openai.requests.at(-1)!.body)).toContain('Answer in one sentence');
  });

  it('docs/quotas.md: the usage report has the shape printed, and the prices file is one PRICES_FILE accepts', async () => {
    const usage = block('docs/quotas.md', '"group": "gpt-4o-mini"');
    done.add(usage);
    const res = await api('GET', '/v1/usage?group_by=model', env.LADDER_KEY!);
    expect(res.status).toBe(200);
    expect(shapeDifferences(docJson(usage.text), res.body)).toEqual([]);
    const prices = block('docs/quotas.md', '"my-finetune"');
    done.add(prices);
    expect(Object.keys(parsePrices(docJson(prices.text)))).toEqual(['my-finetune', 'gpt-4o']);
  });

  it('README and docs/webhooks.md: register endpoints as printed; a run that ends is delivered signed, in the shape printed, and logged as printed', async () => {
    // The pages' URL is a public https one; the receivers here are on 127.0.0.1, which the
    // spawned server accepts because it runs with ALLOW_PRIVATE_ENDPOINTS=true (as the page says tests do).
    const [plain, flaky] = receivers as [WebhookReceiver, WebhookReceiver];
    // The README's manage key first: `use` keys (the quickstart's) may not manage webhooks.
    const manage = await sh(block('README.md', '"scope": "manage"'));
    expect(manage.code, manage.err).toBe(0);
    // The page: `# -> {"id": "...", "key": "ldr_live_...", "scope": "manage", ...}`
    expect(JSON.parse(manage.out)).toMatchObject({ id: expect.any(String), key: expect.stringMatching(/^ldr_live_/), scope: 'manage' });
    env.MANAGE_KEY = JSON.parse(manage.out).key as string;
    const refused = await sh(block('docs/webhooks.md', '$BASE/v1/webhooks'), { MANAGE_KEY: env.LADDER_KEY! });
    expect(JSON.parse(refused.out)).toMatchObject({ error: { type: 'permission_error', code: 'insufficient_scope' } });
    const register = async (b: Block, url: string) => {
      // "from the answer above": the reader's terminal has it already.
      const made = await sh(b, {}, (t) => t.replace('https://example.com/hooks/ladder', url).replace(/^export MANAGE_KEY=.*$/m, ''));
      expect(made.code, made.err).toBe(0);
      return JSON.parse(made.out) as Record<string, any>;
    };
    const shownEndpoint = block('docs/webhooks.md', '"object": "webhook_endpoint"');
    done.add(shownEndpoint);
    const printed = docJson(shownEndpoint.text) as Record<string, any>;
    const all = await register(block('README.md', '$BASE/v1/webhooks'), plain.url);
    const some = await register(block('docs/webhooks.md', '$BASE/v1/webhooks'), flaky.url);
    for (const endpoint of [all, some]) {
      expect(shapeDifferences(printed, endpoint)).toEqual([]);
      expect(endpoint).toMatchObject({ object: 'webhook_endpoint', enabled: true, disabled_at: null, failing_since: null, description: '', secret: expect.stringMatching(/^whsec_/) });
    }
    expect(some).toMatchObject({ url: flaky.url, events: printed.events });
    expect(all).toMatchObject({ url: plain.url, events: ['instance.completed', 'instance.failed', 'instance.cancelled'] });

    // A run ends: both endpoints listen for instance.completed; the docs' receiver fails its first attempt.
    flaky.script([503]);
    const started = await api('POST', '/v1/pipelines/instances', env.LADDER_KEY!, { author: 'alice', template: 'draft-and-refine', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const id = started.body.instanceId as string;
    const about = (r: WebhookReceiver) => r.received.filter((m) => m.body.includes(id));
    // The retry comes about 5 s after the failure (docs/webhooks.md), picked up within WORKER_POLL_MS.
    for (let i = 0; i < 600 && !(about(plain).length === 1 && about(flaky).length === 2); i++) await new Promise((r) => setTimeout(r, 50));
    const messageOf = (r: WebhookReceiver) => about(r).at(-1);
    const shownMessage = block('docs/webhooks.md', '"type": "instance.completed"');
    done.add(shownMessage);
    const { '...': _rest, ...shownData } = (docJson(shownMessage.text) as Record<string, any>).data as Record<string, unknown>;
    const instance = (await api('GET', `/v1/pipelines/instances/${id}`, env.LADDER_KEY!)).body as Record<string, any>;
    for (const [receiver, endpoint] of [[plain, all], [flaky, some]] as const) {
      const message = messageOf(receiver);
      expect(message, receiver.url).toBeDefined();
      expect(message!.headers).toMatchObject({ 'content-type': 'application/json', 'user-agent': 'ladder-webhooks/1' });
      // Signed as Standard Webhooks says: its library verifies the message with the endpoint's secret.
      const verified = new Webhook(endpoint.secret as string).verify(message!.body, message!.headers) as Record<string, any>;
      expect(Object.keys(verified).sort()).toEqual(['data', 'timestamp', 'type']);
      expect(verified).toMatchObject({ type: 'instance.completed', timestamp: instance.finished_at });
      expect(verified.data).toEqual(instance);
      expect(Object.keys(instance)).toEqual(expect.arrayContaining(Object.keys(shownData)));
      expect(verified.data).toMatchObject({ object: shownData.object, status: shownData.status, mode: shownData.mode });
      expect(() => new Webhook(endpoint.secret as string).verify(message!.body.replace('completed', 'failed'), message!.headers)).toThrow();
    }
    // Every retry sends the same bytes, under the same webhook-id.
    const [failed, retried] = about(flaky);
    expect(retried!.body).toBe(failed!.body);
    expect(retried!.headers['webhook-id']).toBe(failed!.headers['webhook-id']);

    // The log of the docs' endpoint: the printed shape, a failed attempt and the one that delivered it.
    const shownLog = block('docs/webhooks.md', '"object": "webhook.delivery"');
    done.add(shownLog);
    const printedLog = docJson(shownLog.text) as Record<string, any>;
    const log = await api('GET', `/v1/webhooks/${some.id}/deliveries`, env.MANAGE_KEY!);
    expect(log.status).toBe(200);
    expect(shapeDifferences(printedLog, log.body)).toEqual([]);
    const delivery = (log.body.data as Array<Record<string, any>>).find((d) => d.instance_id === id)!;
    expect(delivery).toMatchObject({ id: failed!.headers['webhook-id'], webhook_id: some.id, event_type: 'instance.completed', status: 'delivered', next_attempt_at: null });
    const printedAttempts = printedLog.data[0].attempts as Array<Record<string, unknown>>;
    expect(delivery.attempts).toEqual(printedAttempts.map((a) => ({ ...a, started_at: expect.any(String), latency_ms: expect.any(Number) })));
  });

  it('docs/ladder-language.md: the full config is examples/draft-and-refine.yaml; every fragment is part of an example ladder, or valid in its place', () => {
    const ladders = readdirSync('examples').filter((f) => f.endsWith('.yaml')).map((f) => parseConfigText(readFileSync(path.join('examples', f), 'utf8'), f) as Config);
    const full = block('docs/ladder-language.md', '"name": "Draft and refine"');
    done.add(full);
    const config = docJson(full.text);
    expect(validateConfig(config)).toMatchObject({ valid: true });
    const { description: _d, ...published } = ladders.find((l) => l.name === 'Draft and refine')!;
    expect(config).toEqual(published);
    const unchecked = examples
      .filter((b) => b.file === 'docs/ladder-language.md' && b !== full)
      .filter((b) => {
        done.add(b);
        const fragment = docJson(b.text) as Config;
        // A teaching variant (a literal node count before knobs are introduced, a shorter prompt) must still be valid where it goes.
        return !ladders.some((l) => occursIn(fragment, l) || withFragment(l, fragment).some((c) => validateConfig(c).valid));
      })
      .map((b) => `${b.file}:${b.line}: ${b.text.slice(0, 60)}`);
    expect(unchecked).toEqual([]);
  });

  it('left none of the runnable or checkable examples out', () => {
    const left = examples.filter((b) => !done.has(b) && !entryOf(b).some(([, , kind]) => 'skip' in kind)).map((b) => `${b.file}:${b.line}`);
    expect(left).toEqual([]);
  });
});
