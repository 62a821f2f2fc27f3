// Issue 8, item 7: parallel nodes against a vendor that reports as much usage as it is allowed
// (1,000,000 completion tokens when no max_tokens is sent). Each call's worst case is reserved
// before it starts and its max_tokens capped to what its share of the budget pays, so the run
// stops at the budget instead of overshooting it many times over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptTokenBound } from '../../src/ladders/engine/budget.js';
import type { LadderConfig } from '../../src/ladders/language/config.js';
import { priceOf } from '../../src/pricing/prices.js';
import { ask, instanceRow, MODEL, runLadder, saveLadder, startHarness, userWithOpenAI, type Harness } from './ladder-harness.js';

const wide = (maxSpend: number): LadderConfig => ({
  name: 'Wide',
  exit: 'c',
  executionBudget: { maxSpend },
  steps: ['a', 'b', 'c'].map((id) => ({
    id,
    name: id,
    type: 'normal' as const,
    nodes: 8,
    fields: [{ name: 'Q', type: 'text' as const, from: 'input.context' as const }],
    systemPrompt: 'Answer.',
  })),
});

describe('the budget of a run with 8 calls in flight', () => {
  let h: Harness;
  beforeAll(async () => {
    // Output cap raised far above the default so that the budget alone limits max_tokens.
    h = await startHarness({ LADDER_MAX_CONCURRENT_CALLS: '8', LADDER_MAX_OUTPUT_TOKENS: '1000000' });
    h.fake.setDefault({ kind: 'greedy' });
  });
  afterAll(() => h.close());

  it('never spends more than $1 of a $1 budget, and caps each call\'s max_tokens to its share', async () => {
    const user = await userWithOpenAI(h);
    await saveLadder(h, user, 'wide', wide(1));
    const res = await runLadder(h, user, 'wide', ask('Think hard.'));
    expect(res.statusCode, res.body).toBe(402);
    expect(res.json().error).toMatchObject({ type: 'insufficient_quota', code: 'execution_budget_exceeded' });
    expect(res.json().error.message).toMatch(/ the next call of step "b" may cost up to \$0\.0000\d\d, more than remains\.$/);

    // Step a's 8 calls were made together, each capped to about 1/8 of the budget at $0.60 per
    // million output tokens (~208,000 tokens); step b's calls got only the crumbs left over by
    // the prompt estimate (an upper bound) until not even the smallest call fitted.
    const price = priceOf(MODEL);
    const sent = h.fake.requests.map((r) => r.body.max_tokens as number);
    expect(sent.length).toBeGreaterThanOrEqual(8);
    expect(sent.every((n) => Number.isInteger(n) && n >= 16)).toBe(true);
    for (const maxTokens of sent.slice(0, 8)) {
      expect(maxTokens).toBeGreaterThan(200_000);
      expect(maxTokens).toBeLessThanOrEqual(Math.floor(((1 / 8) * 1_000_000) / price.output));
    }
    for (const maxTokens of sent.slice(8)) expect(maxTokens).toBeLessThan(1000);
    const reserved = h.fake.requests.reduce((sum, r) => {
      const prompt = r.body.messages[0].content as string;
      return sum + (promptTokenBound(prompt) * price.input + (r.body.max_tokens as number) * price.output) / 1_000_000;
    }, 0);
    expect(reserved).toBeLessThanOrEqual(1 + 1e-9);

    const row = await instanceRow(h, res.headers['x-ladder-instance'] as string);
    expect(row.status).toBe('failed');
    // A call of step b may be counted and then aborted by the refusal of the next, before it reached the vendor.
    expect(row.model_calls).toBeGreaterThanOrEqual(sent.length);
    expect(Number(row.spend_nanos)).toBeLessThanOrEqual(1_000_000_000);
    expect(Number(row.spend_nanos)).toBeGreaterThan(990_000_000);
    // The greedy vendor used every token it was allowed (a call aborted in flight counts none).
    expect(row.usage!.completion_tokens).toBeGreaterThanOrEqual(sent.slice(0, 8).reduce((a, b) => a + b, 0));
    expect(row.usage!.completion_tokens).toBeLessThanOrEqual(sent.reduce((a, b) => a + b, 0));
  });

  it('with the default output cap, sends max_tokens 4096 while the budget is not tight', async () => {
    const roomy = await startHarness({ LADDER_MAX_CONCURRENT_CALLS: '8' });
    try {
      roomy.fake.setDefault({ kind: 'greedy' });
      const user = await userWithOpenAI(roomy);
      await saveLadder(roomy, user, 'wide', wide(1));
      const res = await runLadder(roomy, user, 'wide', ask('Think hard.'));
      expect(res.statusCode, res.body).toBe(200);
      expect(roomy.fake.requests.map((r) => r.body.max_tokens)).toEqual(Array(24).fill(4096));
      const row = await instanceRow(roomy, res.headers['x-ladder-instance'] as string);
      expect(Number(row.spend_nanos)).toBeLessThanOrEqual(1_000_000_000);
    } finally {
      await roomy.close();
    }
  });
});
