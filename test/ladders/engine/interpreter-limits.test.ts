import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import type { LadderConfig, ModelStep } from '../../../src/ladders/language/config.js';
import { LadderRunError } from '../../../src/ladders/engine/interpreter.js';
import { resolveKnobs } from '../../../src/ladders/engine/knobs.js';
import { runSize } from '../../../src/ladders/engine/limits.js';
import { gatedTreeOfThought, recursiveRefinement } from '../examples.js';
import { accountingOf, deferred, fakeModel, run, systemOf, type RunArgs } from './interpreter-harness.js';

const step = (id: string, extra: Partial<ModelStep> = {}): ModelStep => ({
  id,
  name: id,
  type: 'normal',
  fields: [{ name: 'Q', type: 'text', from: 'input.context' }],
  systemPrompt: id,
  ...extra,
});
const threeSteps: LadderConfig = { name: 't', exit: 'c', steps: [step('a'), step('b'), step('c')] };

async function failure(args: RunArgs): Promise<LadderRunError> {
  const outcome = await run(args).then(
    () => null,
    (error: unknown) => error,
  );
  if (!(outcome instanceof LadderRunError)) throw new Error(`expected a LadderRunError, got ${String(outcome)}`);
  return outcome;
}

const never = () => new Promise<string>(() => {});

describe('runLadder: the execution budget', () => {
  // pricey-model costs $0.001 a token. Each call here has a 32-character prompt (reserved as
  // 32 + 16 tokens, $0.048) and answers 2 tokens; its smallest reservation adds 16 output
  // tokens ($0.016): $0.064. A call costs $0.034.
  it('refuses a call once what remains cannot pay its smallest reservation, and says how much was spent', async () => {
    const model = fakeModel(() => 'ok');
    const error = await failure({ config: threeSteps, model, modelName: 'pricey-model', limits: { maxSpendNanos: 130_000_000 } });
    expect(error).toBeInstanceOf(ApiError);
    expect(error.toBody()).toEqual({
      error: {
        message: 'Execution budget exceeded: spent $0.068000 of the $0.13 maximum; the next call of step "c" may cost up to $0.064000, more than remains.',
        type: 'insufficient_quota',
        code: 'execution_budget_exceeded',
        param: null,
      },
    });
    expect(error.statusCode).toBe(402);
    expect(model.received).toHaveLength(2);
    // Each call's share of the free budget only pays the smallest answer.
    expect(model.received.map((r) => r.maxTokens)).toEqual([16, 16]);
    expect(error.modelCalls).toBe(2);
    expect(error.spendNanos).toBe(68_000_000);
    expect(error.usage).toEqual({ prompt_tokens: 64, completion_tokens: 4, total_tokens: 68 });
    expect(error.trace.map((t) => [t.stepId, t.nodes.length])).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 0],
    ]);
  });

  it('reserves for calls in flight: parallel nodes the budget cannot all pay for are not all started', async () => {
    const model = fakeModel(() => 'ok');
    const config: LadderConfig = { name: 't', exit: 'b', steps: [step('a', { nodes: 3 }), step('b')] };
    const error = await failure({ config, model, modelName: 'pricey-model', limits: { maxSpendNanos: 150_000_000 } });
    expect(error.code).toBe('execution_budget_exceeded');
    expect(error.message).toMatch(
      /^Execution budget exceeded: spent \$0\.\d{6} of the \$0\.15 maximum \(and \$0\.\d{6} is reserved for calls in flight\); the next call of step "a" may cost up to \$0\.064000, more than remains\.$/,
    );
    expect(model.received).toHaveLength(2);
    expect(error.spendNanos).toBeLessThanOrEqual(150_000_000);
  });

  it('runs to the end when the spend stays below maxSpend', async () => {
    const model = fakeModel(() => 'ok');
    const result = await run({ config: threeSteps, model, modelName: 'pricey-model', limits: { maxSpendNanos: 170_000_000 } });
    expect(result.spendNanos).toBe(102_000_000);
    expect(result.modelCalls).toBe(3);
  });

  it('caps every call\'s max_tokens at maxOutputTokens (default 4096) when the budget is not tight', async () => {
    const model = fakeModel(() => 'ok');
    await run({ config: threeSteps, model });
    expect(model.received.map((r) => r.maxTokens)).toEqual([4096, 4096, 4096]);
    const capped = fakeModel(() => 'ok');
    await run({ config: threeSteps, model: capped, limits: { maxOutputTokens: 100 } });
    expect(capped.received.map((r) => r.maxTokens)).toEqual([100, 100, 100]);
  });
});

describe('runLadder: platform caps', () => {
  const knobbed: LadderConfig = {
    name: 't',
    exit: 'deepen',
    knobs: {
      width: { name: 'Width', type: 'nodes', steps: [{ title: 'a', value: 1 }, { title: 'b', value: 5 }] },
      depth: { name: 'Depth', type: 'recursion', steps: [{ title: 'a', value: 0 }, { title: 'b', value: 3 }] },
      loops: { name: 'Loops', type: 'loops', steps: [{ title: 'a', value: 1 }, { title: 'b', value: 3 }] },
    },
    steps: [step('fan', { nodes: '{{knobs.width}}' }), step('deepen', { recursion: { maxDepth: '{{knobs.depth}}' } })],
  };

  it('fails before any call when a step has more nodes than the platform allows', async () => {
    const model = fakeModel();
    const error = await failure({ config: knobbed, model, knobs: { width: 5 }, limits: { maxNodesPerStep: 4 } });
    expect(error).toMatchObject({ statusCode: 422, type: 'execution_error', code: 'run_limit_exceeded', modelCalls: 0, trace: [] });
    expect(error.message).toBe('Step "fan" has 5 nodes (knob "width"); the platform allows at most 4 per step.');
    expect(model.received).toHaveLength(0);
  });

  it('fails before any call when the recursion goes deeper than the platform allows', async () => {
    const error = await failure({ config: knobbed, knobs: { depth: 3 }, limits: { maxRecursionDepth: 2 } });
    expect(error).toMatchObject({ statusCode: 422, code: 'run_limit_exceeded' });
    expect(error.message).toBe('Step "deepen" recurses to depth 3 (knob "depth"); the platform allows at most 2.');
  });

  it('fails before any call when the run needs more model calls than the platform allows', async () => {
    // 3 passes of (5 + 1) calls, each pass with a 3-deep chain of children of 6 calls each.
    const args = { config: knobbed, knobs: { width: 5, depth: 3, loops: 3 } };
    const error = await failure({ ...args, limits: { maxModelCallsPerRun: 71 } });
    expect(error).toMatchObject({ statusCode: 422, code: 'run_limit_exceeded' });
    expect(error.message).toBe('This run needs 72 model calls; the platform allows at most 71 per run.');
    const model = fakeModel(() => 'ok');
    const result = await run({ ...args, model, limits: { maxModelCallsPerRun: 72 } });
    expect(result.modelCalls).toBe(72);
    expect(model.received).toHaveLength(72);
  });

  it('stops a run at its wall-time limit even when a call ignores its signal', async () => {
    const model = fakeModel(never);
    const started = Date.now();
    const error = await failure({ config: threeSteps, model, limits: { maxRunMs: 50 } });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error.toBody().error).toEqual({
      message: 'The run exceeded its wall-time limit of 50 ms and was stopped.',
      type: 'execution_error',
      code: 'run_timeout',
      param: null,
    });
    expect(error.statusCode).toBe(504);
    expect(model.received[0]?.signal?.aborted).toBe(true);
    expect(error.trace[0]?.nodes[0]).toMatchObject({ survived: false, error: 'Aborted: The run exceeded its wall-time limit of 50 ms and was stopped.' });
  });
});

describe('runLadder: cancellation', () => {
  it('stops when the caller aborts, and aborts the call in flight', async () => {
    const controller = new AbortController();
    const started = deferred();
    const model = fakeModel(() => {
      started.resolve();
      return never();
    });
    const pending = failure({ config: threeSteps, model, signal: controller.signal });
    await started.promise;
    controller.abort();
    const error = await pending;
    expect(error).toMatchObject({ statusCode: 499, type: 'execution_error', code: 'run_cancelled', message: 'The run was cancelled before it finished.' });
    expect(model.received[0]?.signal?.aborted).toBe(true);
  });

  it('makes no call when the signal is already aborted, and keeps an ApiError given as the reason', async () => {
    const model = fakeModel();
    const shutdown = new ApiError(503, 'api_error', 'shutting_down', 'The server is shutting down.');
    const error = await failure({ config: threeSteps, model, signal: AbortSignal.abort(shutdown) });
    expect(error).toMatchObject({ statusCode: 503, code: 'shutting_down', modelCalls: 0 });
    expect(model.received).toHaveLength(0);
  });
});

describe('runLadder: failing model calls', () => {
  it('fails the run naming the step, and keeps what was used before', async () => {
    const model = fakeModel((prompt) => {
      if (systemOf(prompt) === 'b') throw new Error('connection reset by peer.');
      return 'ok';
    });
    const error = await failure({ config: threeSteps, model });
    expect(error.toBody().error).toEqual({
      message: 'Step "b" failed: connection reset by peer.',
      type: 'execution_error',
      code: 'step_failed',
      param: null,
    });
    expect(error.statusCode).toBe(502);
    expect(error.modelCalls).toBe(2);
    expect(error.usage).toEqual(accountingOf(model).usage);
    expect(error.trace[1]).toMatchObject({ stepId: 'b', nodes: [{ node: 1, survived: false, provider: null, output: '', error: 'connection reset by peer.' }] });
    expect(model.received).toHaveLength(2);
  });

  it('turns a router error that is not the request\'s fault into step_failed', async () => {
    const model = fakeModel(() => {
      throw new ApiError(429, 'rate_limit_error', 'rate_limited', 'openai: rate limited.');
    });
    const error = await failure({ config: threeSteps, model });
    expect(error).toMatchObject({ statusCode: 502, code: 'step_failed', message: 'Step "a" failed: openai: rate limited.' });
  });

  it('passes on unchanged a router error that is the request\'s own fault', async () => {
    const unsupported = new ApiError(404, 'invalid_request_error', 'model_not_found', 'No provider serves the model "x".', 'model');
    const model = fakeModel(() => {
      throw unsupported;
    });
    const error = await failure({ config: threeSteps, model });
    expect(error.toBody()).toEqual(unsupported.toBody());
    expect(error.statusCode).toBe(404);
    expect(error.cause).toBe(unsupported);
  });

  it('fails when any node fails, aborting its siblings still in flight', async () => {
    const model = fakeModel((prompt, _index, signal) => {
      if (prompt.startsWith('N: 2')) return Promise.reject(new Error('bad gateway'));
      return new Promise<string>((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    });
    const config: LadderConfig = { name: 't', exit: 'fan', steps: [{ id: 'fan', name: 'F', type: 'normal', nodes: 3, fields: [{ name: 'N', type: 'nodeInfo' }] }] };
    const error = await failure({ config, model });
    expect(error).toMatchObject({ statusCode: 502, code: 'step_failed', message: 'Step "fan" failed: bad gateway.' });
    expect(model.received.map((r) => r.signal?.aborted)).toEqual([true, true, true]);
    expect(error.trace[0]?.nodes.map((n) => [n.node, n.error])).toEqual([
      [1, 'Aborted: Step "fan" failed: bad gateway.'],
      [2, 'bad gateway'],
      [3, 'Aborted: Step "fan" failed: bad gateway.'],
    ]);
  });

  it('names the child step when a node inside a group fails', async () => {
    const model = fakeModel((prompt) => {
      if (systemOf(prompt) === 'right') throw new Error('upstream 500');
      return 'ok';
    });
    const config: LadderConfig = {
      name: 't',
      exit: 'left',
      steps: [{ id: 'g', name: 'G', type: 'group', steps: [step('left'), step('right')] }],
    };
    const error = await failure({ config, model });
    expect(error.message).toBe('Step "right" failed: upstream 500.');
  });
});

describe('runSize', () => {
  // Group and recursion shapes: the count must be the length of a successful run's trace.
  const grouped: LadderConfig = {
    name: 'g',
    exit: 'c',
    steps: [step('a'), { id: 'g', name: 'g', type: 'group', steps: [step('b1'), step('b2', { recursion: { maxDepth: 1 } })] }, step('c')],
  };
  const cases: Array<[string, LadderConfig, Record<string, unknown>]> = [
    ['three steps', threeSteps, {}],
    ['a gated tree of thought', gatedTreeOfThought, { thoughts: 5 }],
    ['recursive refinement, default knobs', recursiveRefinement, {}],
    ['recursive refinement, three passes at depth 2', recursiveRefinement, { passes: 3, depth: 2 }],
    ['a group with a recursing child', grouped, {}],
  ];
  for (const [name, config, requested] of cases) {
    it(`counts every step execution of ${name}`, async () => {
      const knobs = resolveKnobs(config, requested);
      const result = await run({ config, knobs: requested, model: fakeModel(() => 'YES') });
      expect(runSize(config, knobs).steps).toBe(result.trace.length);
    });
  }
});
