// Bounded memory whatever the vendors answer: the 25-node x 20-pass ladder, twice at once,
// against a vendor answering 7 MiB per call, ends as two cleanly failed runs while /healthz
// answers and the process stays small; no log line carries a trace, prompt or output.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LadderConfig } from '../../src/ladders/language/config.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, LogCapture, type TestApp } from '../helpers/build.js';
import { instance } from '../helpers/instances.js';

const wide: LadderConfig = {
  name: 'Wide and long',
  exit: 'think',
  knobs: { passes: { name: 'Passes', type: 'loops', steps: [{ title: 'Twenty', value: 20, default: true }] } },
  steps: [
    {
      id: 'think',
      name: 'Think',
      type: 'normal',
      nodes: 25,
      fields: [
        { name: 'Problem', type: 'text', from: 'input.context' },
        { name: 'Earlier', type: 'multi_ingest', from: { stepId: 'think', loopRef: 'previous' } },
      ],
      systemPrompt: 'Think.',
    },
  ],
};

const MiB = 1024 * 1024;

describe('memory bounds', () => {
  let fake: FakeVendor;
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  const logs = new LogCapture();

  // A fresh vendor and app each time: no pooled connection of one test meets the next (an idle
  // socket the fake closes as it is reused would fail a call for reasons beside the point).
  beforeEach(async () => {
    fake = await startFakeOpenAI();
    t = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl, LADDER_MAX_CONCURRENT_CALLS: '8', LADDER_DEFAULT_MAX_SPEND: '50', BREAKER_FAILURE_THRESHOLD: '1000' }, { logs });
    user = await createUser(t.app);
    await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
    const saved = await t.app.inject({ method: 'PUT', url: `/v1/${user.username}/wide`, headers: user.headers, payload: { config: wide } });
    expect(saved.statusCode).toBe(201);
  });
  afterEach(async () => {
    await t.close();
    await fake.close();
  });

  async function twoRunsAtOnce() {
    const run = () =>
      t.app.inject({ method: 'POST', url: `/v1/${user.username}/wide/chat/completions`, headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'go' }] } });
    const base = process.memoryUsage().rss;
    let peak = base;
    let healthy = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
      void t.app.inject({ method: 'GET', url: '/healthz' }).then((r) => r.statusCode === 200 && healthy++);
    }, 25);
    try {
      const answers = await Promise.all([run(), run()]);
      return { answers, growth: peak - base, healthy };
    } finally {
      clearInterval(sampler);
    }
  }

  it('a vendor answering 7 MiB per call: two cleanly failed runs, vendor_response_too_large, /healthz answering', async () => {
    fake.setDefault({ kind: 'reply', content: 'x'.repeat(7 * MiB), usage: { prompt: 1, completion: 1 } });
    const { answers, growth, healthy } = await twoRunsAtOnce();
    for (const res of answers) {
      expect(res.statusCode).toBe(502);
      expect(res.json().error).toMatchObject({ code: 'step_failed', type: 'execution_error' });
      expect(res.json().error.message).toContain('vendor_response_too_large');
      const row = await instance(t.database, res.headers['x-ladder-instance'] as string);
      expect(row).toMatchObject({ status: 'failed', error: { code: 'step_failed' } });
    }
    expect(healthy).toBeGreaterThan(0);
    expect(growth).toBeLessThan(1.5 * 1024 * MiB);
    fake.reset();
  }, 120_000);

  it('answers under the vendor cap but too many of them: 422 run_output_limit_exceeded, outputs cut in the stored trace', async () => {
    fake.setDefault({ kind: 'reply', content: 'y'.repeat(3 * MiB), usage: { prompt: 1, completion: 1 } });
    const { answers, growth } = await twoRunsAtOnce();
    for (const res of answers) {
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error).toEqual({
        code: 'run_output_limit_exceeded', type: 'execution_error', param: null,
        message: "The run's outputs grew past the platform's limit of 32 MiB held at once; use fewer or shorter outputs.",
      });
      const row = await instance(t.database, res.headers['x-ladder-instance'] as string);
      expect(row.status).toBe('failed');
      const node = row.trace[0].nodes.find((n: any) => n.outputChars > 0);
      expect(node).toMatchObject({ outputChars: 3 * MiB });
      expect(node.output).toHaveLength(4000);
      expect(JSON.stringify(row.trace).length).toBeLessThan(1 * MiB);
    }
    expect(growth).toBeLessThan(1.5 * 1024 * MiB);
    fake.reset();
  }, 120_000);

  it('no log line carries a trace, a prompt or an output', () => {
    // The lines of both runs above, written while they failed.
    expect(logs.lines.length).toBeGreaterThan(0);
    for (const line of logs.lines) {
      expect(line.length).toBeLessThan(10_000);
      expect(line).not.toMatch(/x{100}|y{100}/);
      expect(line).not.toContain('"trace"');
    }
    expect(logs.lines.some((l) => l.includes('"code":"step_failed"'))).toBe(true);
  });
});
