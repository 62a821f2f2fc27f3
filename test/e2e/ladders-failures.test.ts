// Ladder runs that are refused or fail: request checks, allowedTargets, knobs, budget,
// vendor failures, and what the instance row records for each (docs/ladders-api.md, "Errors").
import { formatUsd } from '../../src/money.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LadderConfig } from '../../src/ladders/language/config.js';
import { gatedTreeOfThought, minimalLadder, recursiveRefinement } from '../ladders/examples.js';
import {
  ask, echo, echoAccounting, instanceCount, instanceRow, MODEL, promptsReceived, runLadder, saveLadder, SI, startHarness, userWithOpenAI,
  type Harness, type User,
} from './ladder-harness.js';

const constrained = (providers: string[], models: string[]): LadderConfig => ({
  ...minimalLadder,
  allowedTargets: { strategy: 'constrained', providers, models },
});

describe('refused and failed ladder runs', () => {
  let h: Harness;
  let user: User;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    h.fake.reset();
    user = await userWithOpenAI(h);
  });

  /** Asserts a 400 with this code and message, and that nothing ran or was recorded. */
  async function expectRefused(res: Awaited<ReturnType<typeof runLadder>>, code: string, message: string, param: string | null, before: number) {
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: { message, type: 'invalid_request_error', code, param } });
    expect(res.headers['x-ladder-instance']).toBeUndefined();
    expect(h.fake.requests).toHaveLength(0);
    expect(await instanceCount(h)).toBe(before);
  }

  it('checks the request: model and messages required, a user message needed', async () => {
    await saveLadder(h, user, 'l', minimalLadder);
    const before = await instanceCount(h);
    await expectRefused(await runLadder(h, user, 'l', { messages: [{ role: 'user', content: 'x' }] }), 'missing_required_field', 'Missing required field: model.', 'model', before);
    await expectRefused(await runLadder(h, user, 'l', { model: MODEL }), 'missing_required_field', 'Missing required field: messages.', 'messages', before);
    await expectRefused(
      await runLadder(h, user, 'l', { model: MODEL, messages: [{ role: 'system', content: 'x' }] }),
      'missing_user_message', 'messages must contain at least one message with role "user".', 'messages', before,
    );
    expect((await runLadder(h, user, 'l', ask('x', { stream: false, user: 'end-user-1' }))).statusCode).toBe(200);
  });

  it('refuses a model outside the allowed models with 400 model_not_allowed', async () => {
    await saveLadder(h, user, 'rr', recursiveRefinement);
    const before = await instanceCount(h);
    await expectRefused(
      await runLadder(h, user, 'rr', { ...ask('x'), model: 'gpt-4o' }),
      'model_not_allowed',
      `Model "gpt-4o" is not allowed by ladder "${user.username}/rr"; its allowed models are "gpt-4o-mini", "claude-3-5-haiku-latest".`,
      'model',
      before,
    );
  });

  it('matches an explicit provider/model name against the models list by its model part', async () => {
    await saveLadder(h, user, 'explicit', constrained(['openai'], [MODEL]));
    const res = await runLadder(h, user, 'explicit', { ...ask('x'), model: `openai/${MODEL}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(h.fake.requests[0]!.body.model).toBe(MODEL);
  });

  it('refuses a model whose only serving connections are of providers the ladder does not allow', async () => {
    await saveLadder(h, user, 'anthropic-only', constrained(['anthropic'], ['*']));
    const before = await instanceCount(h);
    await expectRefused(
      await runLadder(h, user, 'anthropic-only', ask('x')),
      'model_not_allowed',
      `Model "${MODEL}" is not allowed by ladder "${user.username}/anthropic-only": none of your provider connections that can serve it is one of its allowed providers ("anthropic").`,
      'model',
      before,
    );
    await expectRefused(
      await runLadder(h, user, 'anthropic-only', { ...ask('x'), model: `openai/${MODEL}` }),
      'model_not_allowed',
      `Model "openai/${MODEL}" is not allowed by ladder "${user.username}/anthropic-only": provider "openai" is not one of its allowed providers ("anthropic").`,
      'model',
      before,
    );
    await saveLadder(h, user, 'openai-ok', constrained(['anthropic', 'openai'], ['*']));
    expect((await runLadder(h, user, 'openai-ok', ask('x'))).statusCode).toBe(200);
  });

  it('refuses unknown knobs and non-numbers with 400 invalid_knob', async () => {
    await saveLadder(h, user, 'tot', gatedTreeOfThought);
    const before = await instanceCount(h);
    await expectRefused(
      await runLadder(h, user, 'tot', ask('x', { knobs: { width: 3 } })),
      'invalid_knob', 'Unknown knob "width": this ladder\'s knobs are "thoughts".', 'knobs.width', before,
    );
    await expectRefused(
      await runLadder(h, user, 'tot', ask('x', { knobs: { thoughts: '3' } })),
      'invalid_knob', 'Knob "thoughts" must be a finite number, not a string.', 'knobs.thoughts', before,
    );
  });

  it('clamps and rounds knob values, and records the effective ones', async () => {
    await saveLadder(h, user, 'tot', gatedTreeOfThought);
    const high = await runLadder(h, user, 'tot', ask('x', { knobs: { thoughts: 9.7 } }));
    expect(high.statusCode).toBe(200);
    expect(h.fake.requests).toHaveLength(11);
    expect((await instanceRow(h, high.headers['x-ladder-instance'] as string)).knobs).toEqual({ thoughts: 5 });
    h.fake.reset();
    const low = await runLadder(h, user, 'tot', ask('x', { knobs: { thoughts: -4 } }));
    expect(h.fake.requests).toHaveLength(5);
    expect((await instanceRow(h, low.headers['x-ladder-instance'] as string)).knobs).toEqual({ thoughts: 2 });
  });

  it('stops before a call the rest of the budget cannot pay for: 402 execution_budget_exceeded, instance failed', async () => {
    // The draft fits (its smallest reservation is about $0.00002); the echo then spends about
    // $0.00005, which leaves too little for the refine call's smallest reservation.
    await saveLadder(h, user, 'tight', { ...minimalLadder, executionBudget: { maxSpend: 0.00008 } });
    const res = await runLadder(h, user, 'tight', ask('What is 2+2?'));
    const p1 = `Question: What is 2+2?\n\n${SI}\nAnswer the question.`;
    expect(promptsReceived(h.fake)).toEqual([p1]);
    const { usage, spendNanos } = echoAccounting([p1]);
    expect(res.statusCode).toBe(402);
    const { message } = res.json().error;
    expect(message).toMatch(
      new RegExp(`^Execution budget exceeded: spent \\${formatUsd(spendNanos)} of the \\$0\\.00008 maximum; the next call of step "refine" may cost up to \\$0\\.0000\\d{2}, more than remains\\.$`),
    );
    expect(res.json()).toEqual({ error: { message, type: 'insufficient_quota', code: 'execution_budget_exceeded', param: null } });

    const row = await instanceRow(h, res.headers['x-ladder-instance'] as string);
    expect(row).toMatchObject({
      status: 'failed',
      answer: null,
      error: { status: 402, type: 'insufficient_quota', code: 'execution_budget_exceeded', message },
      usage,
      model_calls: 1,
    });
    expect(Number(row.spend_nanos)).toBe(spendNanos);
    expect(row.trace!.map((s) => [s.stepId, s.nodes.length])).toEqual([['draft', 1], ['refine', 0]]);
    expect(row.finished_at).not.toBeNull();
  });

  it('uses the platform default budget when the config sets none', async () => {
    const tight = await startHarness({ LADDER_DEFAULT_MAX_SPEND: '0.00001' });
    try {
      const owner = await userWithOpenAI(tight);
      await saveLadder(tight, owner, 'l', minimalLadder);
      const res = await runLadder(tight, owner, 'l', ask('What is 2+2?'));
      expect(res.statusCode).toBe(402);
      // $0.00001 cannot pay even the first call's smallest reservation: nothing is sent.
      expect(res.json().error.message).toMatch(/^Execution budget exceeded: spent \$0\.000000 of the \$0\.00001 maximum; the next call of step "draft" may cost up to \$0\.0000\d{2}, more than remains\.$/);
      expect(tight.fake.requests).toHaveLength(0);
    } finally {
      await tight.close();
    }
  });

  it('answers 502 execution_error naming the step when every vendor call fails', async () => {
    await saveLadder(h, user, 'down', minimalLadder);
    h.fake.setDefault({ kind: 'error', status: 500, message: 'fake outage' });
    const res = await runLadder(h, user, 'down', ask('x'));
    h.fake.setDefault(null);
    expect(res.statusCode, res.body).toBe(502);
    const error = res.json().error;
    expect(error).toMatchObject({ type: 'execution_error', code: 'step_failed', param: null });
    expect(error.message).toBe('Step "draft" failed: All providers failed: openai (HTTP 500, server_error).');
    expect(h.fake.requests).toHaveLength(1);

    const row = await instanceRow(h, res.headers['x-ladder-instance'] as string);
    expect(row).toMatchObject({
      status: 'failed',
      error: { status: 502, type: 'execution_error', code: 'step_failed', message: error.message },
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      model_calls: 1,
    });
    expect(Number(row.spend_nanos)).toBe(0);
    expect(row.trace![0]!.nodes[0]).toMatchObject({ node: 1, survived: false, provider: null, output: '' });
    expect(row.trace![0]!.nodes[0]!.error).toEqual(expect.any(String));
  });

  it('fails the run when a later step fails, keeping the usage of the calls made', async () => {
    await saveLadder(h, user, 'half', minimalLadder);
    h.fake.script({ kind: 'delay', ms: 0 }, { kind: 'error', status: 503 });
    const res = await runLadder(h, user, 'half', ask('x'));
    expect(res.statusCode).toBe(502);
    expect(res.json().error.message).toMatch(/^Step "refine" failed: /);
    const prompts = promptsReceived(h.fake);
    const row = await instanceRow(h, res.headers['x-ladder-instance'] as string);
    expect(row).toMatchObject({ status: 'failed', usage: echoAccounting(prompts.slice(0, 1)).usage, model_calls: 2 });
    expect(echo(prompts[0]!)).toBe(row.trace![0]!.nodes[0]!.output);
  });

  it('refuses with 422 run_limit_exceeded, before recording or calling anything, when the knobs ask for more than the platform allows', async () => {
    const capped = await startHarness({ LADDER_MAX_NODES_PER_STEP: '4' });
    try {
      const owner = await userWithOpenAI(capped);
      await saveLadder(capped, owner, 'tot', gatedTreeOfThought);
      const before = await instanceCount(capped);
      const res = await runLadder(capped, owner, 'tot', ask('x', { knobs: { thoughts: 5 } }));
      expect(res.statusCode).toBe(422);
      expect(res.json().error).toEqual({
        message: 'Step "think" has 5 nodes (knob "thoughts"); the platform allows at most 4 per step.',
        type: 'execution_error',
        code: 'run_limit_exceeded',
        param: null,
      });
      expect(capped.fake.requests).toHaveLength(0);
      // The caps are checked with the other request checks, so a refused run leaves no instance.
      expect(res.headers['x-ladder-instance']).toBeUndefined();
      expect(await instanceCount(capped)).toBe(before);
    } finally {
      await capped.close();
    }
  });

  it('stores a run whose vendor answered text that is not valid Unicode, with U+FFFD in its place', async () => {
    await saveLadder(h, user, 'odd', minimalLadder);
    h.fake.script({ kind: 'reply', content: 'half \ud800 a pair' }, { kind: 'reply', content: 'final \udc00' });
    const res = await runLadder(h, user, 'odd', ask('x'));
    expect(res.statusCode, res.body).toBe(200);
    const row = await instanceRow(h, res.headers['x-ladder-instance'] as string);
    expect(row.status).toBe('completed');
    expect(row.answer).toBe('final \ufffd');
    expect(row.trace!.map((s) => s.nodes[0]!.output)).toEqual(['half \ufffd a pair', 'final \ufffd']);
  });
});
