// RunOptions.onAnswerDelta: which call of a run gets the answer's sink (the one whose output is
// the run's answer as made: exit step, last pass, one node, no gate, no recursion left), and that
// such a call is otherwise counted, traced and journaled as any other.
import { describe, expect, it } from 'vitest';
import { runLadder } from '../../../src/ladders/engine/interpreter.js';
import { resolveKnobs } from '../../../src/ladders/engine/knobs.js';
import type { LadderConfig, ModelStep } from '../../../src/ladders/language/config.js';
import type { RecordedCall, RunJournal } from '../../../src/ladders/engine/run-types.js';
import type { ChatResult, DeltaSink, ModelCall } from '../../../src/providers/types.js';
import { systemOf, testLimits, testModel, testPrices } from './interpreter-harness.js';

const step = (id: string, fields: ModelStep['fields'], extra: Partial<ModelStep> = {}): ModelStep => ({ id, name: id, type: 'normal', fields, systemPrompt: id, ...extra });
const input: ModelStep['fields'] = [{ name: 'Q', type: 'text', from: 'input.context' }];
const ladder = (exit: string, steps: LadderConfig['steps'], knobs?: LadderConfig['knobs']): LadderConfig => ({ name: 't', exit, steps, ...(knobs ? { knobs } : {}) });

interface Call {
  step: string;
  streamed: boolean;
}

/** A model whose outputs are `<step>#<n>`; a call given a sink hands its output over in two pieces, awaiting each. */
function streamingModel(answer: (prompt: string, n: number) => string = (p, n) => `${systemOf(p)}#${n}`) {
  const calls: Call[] = [];
  const call: ModelCall = async (request, _signal, onDelta?: DeltaSink): Promise<ChatResult> => {
    const prompt = request.messages[0]!.content as string;
    const content = answer(prompt, calls.length + 1);
    calls.push({ step: systemOf(prompt), streamed: onDelta !== undefined });
    if (onDelta) {
      const half = Math.ceil(content.length / 2);
      await onDelta(content.slice(0, half));
      await onDelta(content.slice(half));
    }
    return { content, finishReason: 'stop', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, provider: 'fake', attempts: [], upstreamMs: 0 };
  };
  return { call, calls };
}

async function runWithSink(config: LadderConfig, model: ReturnType<typeof streamingModel>, knobs?: unknown, journal?: RunJournal) {
  const deltas: string[] = [];
  const result = await runLadder({
    config,
    model: testModel,
    input: 'IN',
    knobs: resolveKnobs(config, knobs),
    call: model.call,
    limits: testLimits,
    prices: testPrices,
    onAnswerDelta: (text) => void deltas.push(text),
    ...(journal ? { journal } : {}),
  });
  return { result, deltas };
}

const streamedSteps = (calls: Call[]) => calls.filter((c) => c.streamed).map((c) => c.step);

describe('runLadder: the answer sink', () => {
  it('goes to the exit step of one node only; its pieces make the answer; the call counts as any other', async () => {
    const model = streamingModel();
    const completed: Array<[string, RecordedCall]> = [];
    const journal: RunJournal = { callCompleted: async (place, call) => void completed.push([place.key, call]) };
    const { result, deltas } = await runWithSink(ladder('refine', [step('draft', input), step('refine', [{ name: 'D', type: 'ingest', from: { stepId: 'draft' } }])]), model, undefined, journal);
    expect(model.calls.map((c) => [c.step, c.streamed])).toEqual([['draft', false], ['refine', true]]);
    expect(deltas).toEqual(['refi', 'ne#2']);
    expect(result.answer).toBe('refine#2');
    expect(result.modelCalls).toBe(2);
    expect(result.usage).toEqual({ prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 });
    expect(result.trace.map((t) => [t.stepId, t.nodes[0]!.output])).toEqual([['draft', 'draft#1'], ['refine', 'refine#2']]);
    // Checkpointed as every call.
    expect(completed.map(([key, call]) => [key, call.output])).toEqual([['1.draft.1', 'draft#1'], ['1.refine.1', 'refine#2']]);
  });

  it('only in the last pass', async () => {
    const model = streamingModel();
    const loops = { loops: { name: 'Loops', type: 'loops' as const, steps: [{ title: 'three', value: 3 }] } };
    const { deltas, result } = await runWithSink(ladder('a', [step('a', input)], loops), model);
    expect(model.calls.map((c) => c.streamed)).toEqual([false, false, true]);
    expect(deltas.join('')).toBe(result.answer);
  });

  it('not to an exit of several nodes, or behind a gate: the caller sends the answer whole', async () => {
    const several = streamingModel();
    const { deltas: none } = await runWithSink(ladder('a', [step('a', input, { nodes: 2 })]), several);
    expect(several.calls.map((c) => c.streamed)).toEqual([false, false]);
    expect(none).toEqual([]);

    const gated = streamingModel(() => 'YES');
    const { deltas, result } = await runWithSink(ladder('a', [step('a', input, { continueIf: 'YES' })]), gated);
    expect(gated.calls.map((c) => c.streamed)).toEqual([false]);
    expect(deltas).toEqual([]);
    expect(result.answer).toBe('YES');
  });

  it('when the exit recurses: to the deepest level’s exit call only, whose output is the answer', async () => {
    const depth = { depth: { name: 'Depth', type: 'recursion' as const, steps: [{ title: 'two', value: 2 }] } };
    const model = streamingModel((p, n) => (systemOf(p) === 'deep' ? `deep(${n})` : `x${n}`));
    const config = ladder('deep', [step('deep', [{ name: 'Q', type: 'text', from: 'input.context' }], { recursion: { maxDepth: '{{knobs.depth}}' } }), step('after', [{ name: 'R', type: 'ingest', from: { stepId: 'deep' } }])], depth);
    const { deltas, result } = await runWithSink(config, model);
    // deep at depth 0, 1, 2, then `after` at depth 2, 1, 0: only the third call made the answer.
    expect(model.calls.map((c) => [c.step, c.streamed])).toEqual([['deep', false], ['deep', false], ['deep', true], ['after', false], ['after', false], ['after', false]]);
    expect(result.answer).toBe('deep(3)');
    expect(deltas.join('')).toBe('deep(3)');
  });

  it('when another step recurses: its children make no answer, the root’s exit call does', async () => {
    const model = streamingModel();
    const config = ladder('final', [
      step('dig', input, { recursion: { maxDepth: 1 } }),
      step('final', [{ name: 'R', type: 'ingest', from: { stepId: 'dig' } }]),
    ]);
    const { deltas, result } = await runWithSink(config, model);
    // dig (depth 0), dig and final of the child (depth 1), then final at depth 0.
    expect(model.calls.map((c) => [c.step, c.streamed])).toEqual([['dig', false], ['dig', false], ['final', false], ['final', true]]);
    expect(deltas.join('')).toBe(result.answer);
  });

  it('no sink without onAnswerDelta', async () => {
    const model = streamingModel();
    await runLadder({ config: ladder('a', [step('a', input)]), model: testModel, input: 'IN', knobs: {}, call: model.call, limits: testLimits, prices: testPrices });
    expect(streamedSteps(model.calls)).toEqual([]);
  });
});
