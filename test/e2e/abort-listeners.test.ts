// Issue 8, item 14: busy runs must not pile listeners onto one abort signal. A ladder step with
// many nodes in flight, and many direct calls sharing one caller signal, leave every signal
// with a bounded number of listeners and never trigger MaxListenersExceededWarning.
import { getEventListeners } from 'node:events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LadderConfig } from '../../src/ladders/language/config.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { connection, rejection, routerWith, userSays } from '../providers/helpers.js';
import { ask, runLadder, saveLadder, startHarness, userWithOpenAI, type Harness } from './ladder-harness.js';

const warnings: Error[] = [];
const onWarning = (warning: Error) => void warnings.push(warning);
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => void process.off('warning', onWarning));
const listenerWarnings = () => warnings.filter((w) => w.name === 'MaxListenersExceededWarning');

const wide: LadderConfig = {
  name: 'Wide',
  exit: 'c',
  steps: ['a', 'b', 'c'].map((id) => ({
    id,
    name: id,
    type: 'normal' as const,
    nodes: 16,
    fields: [{ name: 'Q', type: 'text' as const, from: 'input.context' as const }],
    systemPrompt: 'Answer.',
  })),
};

describe('a ladder run with many calls in flight', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ LADDER_MAX_CONCURRENT_CALLS: '16' });
    // Slow enough that all 16 nodes of a step are in flight together.
    h.fake.setDefault({ kind: 'delay', ms: 150 });
  });
  afterAll(() => h.close());

  it('emits no MaxListenersExceededWarning', async () => {
    const user = await userWithOpenAI(h);
    await saveLadder(h, user, 'wide', wide);
    const res = await runLadder(h, user, 'wide', ask('x'));
    expect(res.statusCode, res.body).toBe(200);
    expect(h.fake.requests).toHaveLength(48);
    await new Promise((r) => setImmediate(r));
    expect(listenerWarnings()).toEqual([]);
  });
});

describe('direct calls sharing one signal', () => {
  let fake: FakeVendor;
  let env: ReturnType<typeof routerWith>;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.setDefault({ kind: 'delay', ms: 200 });
    env = routerWith({ baseUrls: { openai: fake.baseUrl } });
  });
  afterAll(async () => {
    await env.router.close();
    await fake.close();
  });

  it('keep one listener on it, whatever the number of calls, and all stop when it aborts', async () => {
    const caller = new AbortController();
    const conn = connection('openai', fake.apiKey);
    const calls = Array.from({ length: 40 }, () => env.router.call(userSays('hi'), [conn], caller.signal));
    await new Promise((r) => setTimeout(r, 50));
    expect(getEventListeners(caller.signal, 'abort').length).toBeLessThanOrEqual(1);
    const results = await Promise.all(calls);
    expect(results.every((r) => r.content === 'echo: hi')).toBe(true);
    expect(getEventListeners(caller.signal, 'abort').length).toBeLessThanOrEqual(1);

    fake.reset();
    fake.setDefault({ kind: 'delay', ms: 60_000 });
    const hanging = Array.from({ length: 40 }, () => rejection(env.router.call(userSays('hi'), [conn], caller.signal)));
    await new Promise((r) => setTimeout(r, 300));
    expect(getEventListeners(caller.signal, 'abort').length).toBeLessThanOrEqual(1);
    caller.abort();
    const errors = await Promise.all(hanging);
    expect(errors.every((e) => e.kind === 'abort')).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.requests.filter((r) => r.clientClosed)).toHaveLength(40);
    expect(listenerWarnings()).toEqual([]);
  });
});
