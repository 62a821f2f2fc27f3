import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import type { LadderConfig, ModelStep } from '../../../src/ladders/language/config.js';
import { TRACE_OUTPUT_CHARS, TRACE_PROMPT_CHARS } from '../../../src/ladders/engine/interpreter.js';
import type { RecordedCall, RunJournal } from '../../../src/ladders/engine/run-types.js';
import { accountingOf, deferred, fakeModel, run, systemOf, testModel } from './interpreter-harness.js';

const line = (prompt: string, name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(prompt)?.[1] ?? '';
const nodeOf = (prompt: string) => Number(line(prompt, 'N'));
const ladder = (exit: string, steps: LadderConfig['steps'], knobs?: LadderConfig['knobs']): LadderConfig => ({
  name: 'test',
  exit,
  steps,
  ...(knobs ? { knobs } : {}),
});
const step = (id: string, fields: ModelStep['fields'], extra: Partial<ModelStep> = {}): ModelStep => ({
  id,
  name: id,
  type: 'normal',
  fields,
  systemPrompt: id,
  ...extra,
});

describe('runLadder: a plain step list', () => {
  it('sends each step its assembled prompt as one user message and answers with the exit step', async () => {
    const model = fakeModel((prompt) => `out:${systemOf(prompt)}`);
    const config = ladder('refine', [
      step('draft', [{ name: 'Question', type: 'text', from: 'input.context' }]),
      step('refine', [
        { name: 'Question', type: 'text', from: 'input.context' },
        { name: 'Draft', type: 'ingest', from: { stepId: 'draft' } },
      ]),
    ]);
    const result = await run({ config, model, input: 'Why?' });

    expect(model.prompts()).toEqual([
      'Question: Why?\n\n[System Instruction]\ndraft',
      'Question: Why?\n\nDraft: out:draft\n\n[System Instruction]\nrefine',
    ]);
    expect(model.received.every((r) => r.model === testModel)).toBe(true);
    expect(result.answer).toBe('out:refine');
    expect(result.modelCalls).toBe(2);
    const expected = accountingOf(model);
    expect(result.usage).toEqual(expected.usage);
    expect(result.usage).toEqual({ prompt_tokens: 42 + 61, completion_tokens: 9 + 10, total_tokens: 122 });
    expect(result.spendNanos).toBe(expected.spendNanos);
    expect(result.trace).toEqual([
      {
        pass: 1,
        depth: 0,
        stepId: 'draft',
        nodes: [
          {
            node: 1,
            prompt: model.prompts()[0],
            promptChars: 42,
            output: 'out:draft',
            outputChars: 9,
            survived: true,
            usage: { prompt_tokens: 42, completion_tokens: 9, total_tokens: 51 },
            costNanos: (42 + 18) * 1000,
            provider: 'fake',
            latencyMs: expect.any(Number),
          },
        ],
      },
      {
        pass: 1,
        depth: 0,
        stepId: 'refine',
        nodes: [expect.objectContaining({ node: 1, output: 'out:refine', survived: true, promptChars: 61 })],
      },
    ]);
  });

  it('cuts the output kept in the trace, but not the output the next step reads', async () => {
    const long = 'y'.repeat(TRACE_OUTPUT_CHARS + 10);
    const model = fakeModel((prompt) => (prompt.includes('Earlier') ? 'done' : long));
    const result = await run({
      config: ladder('b', [step('a', [{ name: 'Q', type: 'text', from: 'input.context' }]), step('b', [{ name: 'Earlier', type: 'ingest', from: { stepId: 'a' } }])]),
      model,
      input: 'q',
    });
    expect(result.trace[0]?.nodes[0]).toMatchObject({ output: long.slice(0, TRACE_OUTPUT_CHARS), outputChars: long.length });
    expect(model.prompts()[1]).toContain(long);
  });

  it('cuts the prompt kept in the trace, but not the prompt sent', async () => {
    const model = fakeModel(() => 'ok');
    const input = 'x'.repeat(5000);
    const result = await run({ config: ladder('a', [step('a', [{ name: 'Q', type: 'text', from: 'input.context' }])]), model, input });
    const node = result.trace[0]?.nodes[0];
    expect(model.prompts()[0]).toHaveLength(3 + 5000 + 2 + 21 + 1);
    expect(node?.prompt).toBe(model.prompts()[0]?.slice(0, TRACE_PROMPT_CHARS));
    expect(node?.promptChars).toBe(5027);
  });
});

describe('runLadder: nodes', () => {
  it('gives every node of a normal step the same fields but its own node number', async () => {
    const model = fakeModel((prompt) => (systemOf(prompt) === 'fan' ? `idea ${nodeOf(prompt)}` : 'done'));
    const config = ladder('collect', [
      step('fan', [{ name: 'Q', type: 'text', from: 'input.context' }, { name: 'N', type: 'nodeInfo' }], { nodes: 3 }),
      step('collect', [
        { name: 'All', type: 'multi_ingest', from: { stepId: 'fan' } },
        { name: 'Second', type: 'ingest', from: { stepId: 'fan', nodeRef: 2 } },
        { name: 'Value', type: 'ingest', from: { stepId: 'fan' } },
        { name: 'Fourth', type: 'ingest', from: { stepId: 'fan', nodeRef: 4 } },
      ]),
    ]);
    const result = await run({ config, model });

    expect(model.prompts()).toEqual([
      'Q: INPUT\n\nN: 1\n\n[System Instruction]\nfan',
      'Q: INPUT\n\nN: 2\n\n[System Instruction]\nfan',
      'Q: INPUT\n\nN: 3\n\n[System Instruction]\nfan',
      'All 1: idea 1\nAll 2: idea 2\nAll 3: idea 3\n\nSecond: idea 2\n\nValue: idea 3\n\nFourth: \n\n[System Instruction]\ncollect',
    ]);
    expect(result.trace[0]?.nodes.map((n) => [n.node, n.output])).toEqual([
      [1, 'idea 1'],
      [2, 'idea 2'],
      [3, 'idea 3'],
    ]);
  });

  it('keeps trace nodes in node order when later nodes answer first', async () => {
    const model = fakeModel(async (prompt) => {
      await new Promise((resolve) => setTimeout(resolve, (4 - nodeOf(prompt)) * 10));
      return `n${nodeOf(prompt)}`;
    });
    const result = await run({ config: ladder('fan', [step('fan', [{ name: 'N', type: 'nodeInfo' }], { nodes: 3 })]), model });
    expect(model.received.map((r) => r.output)).toEqual(['n1', 'n2', 'n3']);
    expect(result.trace[0]?.nodes.map((n) => n.node)).toEqual([1, 2, 3]);
    expect(result.answer).toBe('n3');
  });

  it('runs the nodes of a normal step concurrently, at most maxConcurrentCalls at once', async () => {
    let inFlight = 0;
    let peak = 0;
    const model = fakeModel(async () => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 10));
      inFlight -= 1;
      return 'ok';
    });
    const config = ladder('fan', [step('fan', [{ name: 'N', type: 'nodeInfo' }], { nodes: 7 })]);
    await run({ config, model, limits: { maxConcurrentCalls: 3 } });
    expect(model.received).toHaveLength(7);
    expect(peak).toBe(3);
  });

  it('takes the node count from a nodes knob', async () => {
    const model = fakeModel(() => 'ok');
    const config = ladder('fan', [step('fan', [], { nodes: '{{knobs.width}}' })], {
      width: { name: 'Width', type: 'nodes', steps: [{ title: 'a', value: 1 }, { title: 'b', value: 4 }] },
    });
    await run({ config, model, knobs: { width: 2.6 } });
    expect(model.received).toHaveLength(3);
  });
});

describe('runLadder: knobInfo', () => {
  it('renders the effective value of a generic knob, after clamping', async () => {
    const config = ladder('a', [step('a', [{ name: 'Temperature', type: 'knobInfo', from: 'temp' }])], {
      temp: { name: 'Temp', type: 'generic', steps: [{ title: 'low', value: 0.1 }, { title: 'high', value: 0.9, default: true }] },
    });
    const model = fakeModel(() => 'ok');
    await run({ config, model });
    await run({ config, model, knobs: { temp: 0.75 } });
    await run({ config, model, knobs: { temp: 2 } });
    expect(model.prompts().map((p) => line(p, 'Temperature'))).toEqual(['0.9', '0.75', '0.9']);
  });
});

describe('runLadder: gates', () => {
  const verdicts: Record<number, string> = { 1: ' YES ', 2: 'NO', 3: 'YES', 4: 'yes' };
  const gated = (exit: string, gate: string) =>
    ladder(exit, [
      step('judge', [{ name: 'N', type: 'nodeInfo' }], { nodes: 4, continueIf: gate }),
      step('use', [
        { name: 'Kept', type: 'multi_ingest', from: { stepId: 'judge', nodeRef: 'accumulate' } },
        { name: 'Value', type: 'ingest', from: { stepId: 'judge' } },
        { name: 'Second', type: 'ingest', from: { stepId: 'judge', nodeRef: 2 } },
        { name: 'Q', type: 'text', from: 'input.context' },
      ]),
    ]);
  const judgeModel = () => fakeModel((prompt) => (systemOf(prompt) === 'judge' ? (verdicts[nodeOf(prompt)] ?? '') : 'used'));

  it('keeps only nodes whose trimmed output equals continueIf, numbered by their node number', async () => {
    const model = judgeModel();
    const result = await run({ config: gated('use', 'YES'), model });
    expect(model.prompts()[4]).toBe('Kept 1:  YES \nKept 3: YES\n\nValue: YES\n\nSecond: \n\nQ: INPUT\n\n[System Instruction]\nuse');
    expect(result.trace[0]?.nodes.map((n) => n.survived)).toEqual([true, false, true, false]);
    expect(result.trace[1]?.nodes.map((n) => n.survived)).toEqual([true]);
  });

  it('goes on with an empty value and an empty list when every node is pruned', async () => {
    const model = judgeModel();
    const result = await run({ config: gated('use', 'MAYBE'), model });
    expect(model.prompts()[4]).toBe('Value: \n\nSecond: \n\nQ: INPUT\n\n[System Instruction]\nuse');
    expect(result.answer).toBe('used');
    expect(result.trace[0]?.nodes.every((n) => !n.survived)).toBe(true);
  });

  it('answers with an empty string when the exit step is pruned entirely', async () => {
    const model = judgeModel();
    const result = await run({ config: gated('judge', 'MAYBE'), model });
    expect(result.answer).toBe('');
    expect(result.modelCalls).toBe(5);
  });
});

describe('runLadder: sequential steps', () => {
  const chain = (extra: Partial<ModelStep>, skipFirstNode?: boolean) =>
    step(
      'chain',
      [
        { name: 'Q', type: 'text', from: 'input.context' },
        { name: 'Prev', type: 'ingest', from: { stepId: 'chain', nodeRef: 'previous' }, ...(skipFirstNode ? { skipFirstNode } : {}) },
        { name: 'N', type: 'nodeInfo' },
      ],
      { type: 'sequential', nodes: 3, ...extra },
    );

  it('runs nodes one after another, node k reading node k-1, node 1 reading nothing with skipFirstNode', async () => {
    let inFlight = 0;
    let peak = 0;
    const model = fakeModel(async (prompt) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight -= 1;
      return `c${nodeOf(prompt)}`;
    });
    const result = await run({ config: ladder('chain', [chain({}, true)]), model });
    expect(model.prompts()).toEqual([
      'Q: INPUT\n\nPrev: \n\nN: 1\n\n[System Instruction]\nchain',
      'Q: INPUT\n\nPrev: c1\n\nN: 2\n\n[System Instruction]\nchain',
      'Q: INPUT\n\nPrev: c2\n\nN: 3\n\n[System Instruction]\nchain',
    ]);
    expect(peak).toBe(1);
    expect(result.answer).toBe('c3');
  });

  it('lets later nodes read earlier ones before the gate, which applies once all have finished', async () => {
    const model = fakeModel((prompt) => (systemOf(prompt) === 'chain' ? `c${nodeOf(prompt)}` : 'end'));
    const config = ladder('after', [
      chain({ continueIf: 'c2' }, true),
      step('after', [
        { name: 'All', type: 'multi_ingest', from: { stepId: 'chain', nodeRef: 'accumulate' } },
        { name: 'Value', type: 'ingest', from: { stepId: 'chain' } },
      ]),
    ]);
    await run({ config, model });
    expect(model.prompts()[2]).toBe('Q: INPUT\n\nPrev: c2\n\nN: 3\n\n[System Instruction]\nchain');
    expect(model.prompts()[3]).toBe('All 2: c2\n\nValue: c2\n\n[System Instruction]\nafter');
  });

  it('lets a node list every earlier node of its own sequential step', async () => {
    const model = fakeModel((prompt) => `c${nodeOf(prompt)}`);
    const config = ladder('chain', [
      step('chain', [{ name: 'So far', type: 'multi_ingest', from: { stepId: 'chain', nodeRef: 'accumulate' } }, { name: 'N', type: 'nodeInfo' }], {
        type: 'sequential',
        nodes: 3,
      }),
    ]);
    await run({ config, model });
    expect(model.prompts()).toEqual([
      'N: 1\n\n[System Instruction]\nchain',
      'So far 1: c1\n\nN: 2\n\n[System Instruction]\nchain',
      'So far 1: c1\nSo far 2: c2\n\nN: 3\n\n[System Instruction]\nchain',
    ]);
  });

  it('without skipFirstNode, node 1 continues from the step value of the previous pass', async () => {
    const model = fakeModel((_prompt, index) => `out${index}`);
    const config = ladder('chain', [chain({ nodes: 2 })], {
      loops: { name: 'Loops', type: 'loops', steps: [{ title: 'two', value: 2 }] },
    });
    const result = await run({ config, model });
    expect(model.prompts().map((p) => line(p, 'Prev'))).toEqual(['', 'out0', 'out1', 'out2']);
    expect(result.answer).toBe('out3');
  });

  it('gives node 1 an empty string on every pass with skipFirstNode', async () => {
    const model = fakeModel((_prompt, index) => `out${index}`);
    const config = ladder('chain', [chain({ nodes: 2 }, true)], {
      loops: { name: 'Loops', type: 'loops', steps: [{ title: 'two', value: 2 }] },
    });
    await run({ config, model });
    expect(model.prompts().map((p) => line(p, 'Prev'))).toEqual(['', 'out0', '', 'out2']);
  });
});

describe('runLadder: loops', () => {
  const rounds = { rounds: { name: 'Rounds', type: 'loops' as const, steps: [{ title: 'one', value: 1 }, { title: 'three', value: 3, default: true }] } };
  const looped = ladder(
    'polish',
    [
      step('write', [
        { name: 'Q', type: 'text', from: 'input.context' },
        { name: 'Last', type: 'ingest', from: { stepId: 'polish', loopRef: 'previous' } },
        { name: 'Rounds', type: 'knobInfo', from: 'rounds' },
      ]),
      step('polish', [
        { name: 'W', type: 'ingest', from: { stepId: 'write', loopRef: 'current' } },
        { name: 'History', type: 'multi_ingest', from: { stepId: 'polish', loopRef: 'accumulate' } },
      ]),
    ],
    rounds,
  );

  it('runs the whole step list once per pass, reading the previous pass and accumulating earlier ones', async () => {
    const model = fakeModel((prompt, index) => `${systemOf(prompt)}#${index}`);
    const result = await run({ config: looped, model });
    expect(model.prompts()).toEqual([
      'Q: INPUT\n\nLast: \n\nRounds: 3\n\n[System Instruction]\nwrite',
      'W: write#0\n\n[System Instruction]\npolish',
      'Q: INPUT\n\nLast: polish#1\n\nRounds: 3\n\n[System Instruction]\nwrite',
      'W: write#2\n\nHistory 1: polish#1\n\n[System Instruction]\npolish',
      'Q: INPUT\n\nLast: polish#3\n\nRounds: 3\n\n[System Instruction]\nwrite',
      'W: write#4\n\nHistory 1: polish#1\nHistory 2: polish#3\n\n[System Instruction]\npolish',
    ]);
    expect(result.answer).toBe('polish#5');
    expect(result.trace.map((t) => [t.pass, t.stepId])).toEqual([
      [1, 'write'],
      [1, 'polish'],
      [2, 'write'],
      [2, 'polish'],
      [3, 'write'],
      [3, 'polish'],
    ]);
    expect(result.usage).toEqual(accountingOf(model).usage);
  });

  it('follows the loops knob of the request', async () => {
    const model = fakeModel((prompt, index) => `${systemOf(prompt)}#${index}`);
    const result = await run({ config: looped, model, knobs: { rounds: 1 } });
    expect(model.prompts()[0]).toBe('Q: INPUT\n\nLast: \n\nRounds: 1\n\n[System Instruction]\nwrite');
    expect(result.answer).toBe('polish#1');
    expect(result.modelCalls).toBe(2);
  });

  it('numbers accumulated passes by pass, and nodes of accumulated passes as pass.node', async () => {
    const model = fakeModel((prompt, index) => `${systemOf(prompt)}#${index}`);
    const config = ladder(
      'sum',
      [
        step('gen', [], { nodes: 2 }),
        step('sum', [
          { name: 'All', type: 'multi_ingest', from: { stepId: 'gen', loopRef: 'accumulate', nodeRef: 'accumulate' } },
          { name: 'Firsts', type: 'multi_ingest', from: { stepId: 'gen', loopRef: 'accumulate', nodeRef: 1 } },
          { name: 'Before', type: 'multi_ingest', from: { stepId: 'gen', loopRef: 'previous' } },
          { name: 'PrevSecond', type: 'ingest', from: { stepId: 'gen', loopRef: 'previous', nodeRef: 2 } },
        ]),
      ],
      { loops: { name: 'Loops', type: 'loops', steps: [{ title: 'three', value: 3 }] } },
    );
    await run({ config, model });
    expect(model.prompts()[2]).toBe('PrevSecond: \n\n[System Instruction]\nsum');
    expect(model.prompts()[8]).toBe(
      [
        'All 1.1: gen#0\nAll 1.2: gen#1\nAll 2.1: gen#3\nAll 2.2: gen#4',
        'Firsts 1: gen#0\nFirsts 2: gen#3',
        'Before 1: gen#3\nBefore 2: gen#4',
        'PrevSecond: gen#4',
        '[System Instruction]\nsum',
      ].join('\n\n'),
    );
  });

  it('leaves out of an accumulated list the passes in which the step was pruned entirely', async () => {
    const model = fakeModel((prompt, index) => (systemOf(prompt) === 'maybe' ? (index === 0 ? 'keep' : 'drop') : `end#${index}`));
    const config = ladder(
      'end',
      [
        step('maybe', [], { continueIf: 'keep' }),
        step('end', [{ name: 'Kept', type: 'multi_ingest', from: { stepId: 'maybe', loopRef: 'accumulate' } }]),
      ],
      { loops: { name: 'Loops', type: 'loops', steps: [{ title: 'three', value: 3 }] } },
    );
    await run({ config, model });
    expect(model.prompts()[5]).toBe('Kept 1: keep\n\n[System Instruction]\nend');
  });
});

describe('runLadder: groups', () => {
  it('runs the children side by side; later steps read them by id; the group has no trace entry', async () => {
    const leftStarted = deferred();
    const rightStarted = deferred();
    const model = fakeModel(async (prompt) => {
      const sys = systemOf(prompt);
      if (sys === 'left') {
        leftStarted.resolve();
        await rightStarted.promise;
      }
      if (sys === 'right') {
        rightStarted.resolve();
        await leftStarted.promise;
      }
      return sys === 'join' ? 'joined' : `${sys}${nodeOf(prompt)}`;
    });
    const config = ladder('join', [
      {
        id: 'g',
        name: 'G',
        type: 'group',
        steps: [
          step('left', [{ name: 'N', type: 'nodeInfo' }], { nodes: 2 }),
          step('right', [{ name: 'N', type: 'nodeInfo' }, { name: 'P', type: 'ingest', from: { stepId: 'right', nodeRef: 'previous' } }], {
            type: 'sequential',
            nodes: 2,
          }),
        ],
      },
      step('join', [
        { name: 'L', type: 'multi_ingest', from: { stepId: 'left', nodeRef: 'accumulate' } },
        { name: 'R', type: 'ingest', from: { stepId: 'right' } },
      ]),
    ]);
    const result = await run({ config, model, limits: { maxRunMs: 2000 } });
    expect(model.prompts().at(-1)).toBe('L 1: left1\nL 2: left2\n\nR: right2\n\n[System Instruction]\njoin');
    expect(model.prompts()).toContain('N: 2\n\nP: right1\n\n[System Instruction]\nright');
    expect(result.trace.map((t) => [t.stepId, t.groupId])).toEqual([
      ['left', 'g'],
      ['right', 'g'],
      ['join', undefined],
    ]);
    expect(result.answer).toBe('joined');
  });

  it('bounds the calls of all children of a group together by maxConcurrentCalls', async () => {
    let inFlight = 0;
    let peak = 0;
    const model = fakeModel(async () => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 10));
      inFlight -= 1;
      return 'ok';
    });
    const config = ladder('a', [
      { id: 'g', name: 'G', type: 'group', steps: [step('a', [], { nodes: 3 }), step('b', [], { nodes: 3 })] },
    ]);
    await run({ config, model, limits: { maxConcurrentCalls: 4 } });
    expect(model.received).toHaveLength(6);
    expect(peak).toBe(4);
  });
});

describe('runLadder: recursion', () => {
  const depthKnob = { depth: { name: 'Depth', type: 'recursion' as const, steps: [0, 1, 2].map((value) => ({ title: `${value}`, value })) } };
  const recursive = (exit: string) =>
    ladder(
      exit,
      [
        step('draft', [{ name: 'Task', type: 'text', from: 'input.context' }]),
        step('deepen', [{ name: 'D', type: 'ingest', from: { stepId: 'draft' } }], { recursion: { maxDepth: '{{knobs.depth}}' } }),
        step('final', [
          { name: 'R', type: 'ingest', from: { stepId: 'deepen' } },
          { name: 'Task', type: 'text', from: 'input.context' },
        ]),
      ],
      depthKnob,
    );
  const model = () =>
    fakeModel((prompt) => {
      const sys = systemOf(prompt);
      if (sys === 'draft') return `draft[${line(prompt, 'Task')}]`;
      if (sys === 'deepen') return `deep[${line(prompt, 'D')}]`;
      return `final[${line(prompt, 'R')}|${line(prompt, 'Task')}]`;
    });

  it('does not recurse at depth 0', async () => {
    const m = model();
    const result = await run({ config: recursive('final'), model: m, knobs: { depth: 0 } });
    expect(result.answer).toBe('final[deep[draft[INPUT]]|INPUT]');
    expect(result.modelCalls).toBe(3);
    expect(result.trace.every((t) => t.depth === 0 && t.recursionAnswer === undefined)).toBe(true);
  });

  it('names each call by its place, recursion lineage included; a run replaying them makes no call and answers the same', async () => {
    const recorded = new Map<string, RecordedCall>();
    const journal: RunJournal = {
      callCompleted: async (place, call) => void recorded.set(place.key, call),
    };
    const first = await run({ config: recursive('final'), model: model(), knobs: { depth: 1 }, journal });
    expect([...recorded.keys()]).toEqual(['1.draft.1', '1.deepen.1', '1.deepen/1.draft.1', '1.deepen/1.deepen.1', '1.deepen/1.final.1', '1.final.1']);
    const replaying = fakeModel(() => 'never');
    const again = await run({ config: recursive('final'), model: replaying, knobs: { depth: 1 }, journal: { recorded: async (key) => recorded.get(key) } });
    expect(replaying.prompts()).toEqual([]);
    expect(again).toMatchObject({ answer: first.answer, usage: first.usage, modelCalls: 6 });
    expect(again.spendNanos).toBe(first.spendNanos);
  });

  it('holds each call it makes until the journal lets it go (beforeCall), never a replayed one; a refusal ends the run with its error', async () => {
    const order: string[] = [];
    const m = fakeModel((prompt) => {
      order.push(`call ${systemOf(prompt)}`);
      return systemOf(prompt);
    });
    const gates: (() => void)[] = [];
    const recorded = new Map<string, RecordedCall>();
    const journal: RunJournal = {
      beforeCall: () => {
        order.push('held');
        return new Promise<void>((resolve) => gates.push(resolve));
      },
      callCompleted: async (place, call) => {
        order.push(`completed ${place.stepId}`);
        recorded.set(place.key, call);
      },
    };
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    const running = run({ config: recursive('final'), model: m, knobs: { depth: 0 }, journal });
    for (let i = 0; i < 3; i++) {
      while (gates.length <= i) await tick();
      await tick();
      expect(m.prompts()).toHaveLength(i);
      gates[i]!();
    }
    expect((await running).modelCalls).toBe(3);
    expect(order).toEqual(['held', 'call draft', 'completed draft', 'held', 'call deepen', 'completed deepen', 'held', 'call final', 'completed final']);

    let asked = 0;
    const replayed = await run({ config: recursive('final'), model: fakeModel(() => 'never'), knobs: { depth: 0 }, journal: { recorded: async (key) => recorded.get(key), beforeCall: () => void (asked += 1) } });
    expect(replayed.modelCalls).toBe(3);
    expect(asked).toBe(0);

    const refused = fakeModel(() => 'never');
    const lost = new ApiError(503, 'api_error', 'run_interrupted', 'The run was interrupted.');
    await expect(run({ config: recursive('final'), model: refused, knobs: { depth: 0 }, journal: { beforeCall: () => Promise.reject(lost) } })).rejects.toMatchObject({ code: 'run_interrupted', message: 'The run was interrupted.' });
    expect(refused.prompts()).toEqual([]);
  });

  it('at depth 1 runs one child on the recursion output and replaces that output with its answer', async () => {
    const m = model();
    const result = await run({ config: recursive('final'), model: m, knobs: { depth: 1 } });
    const o0 = 'deep[draft[INPUT]]';
    const o1 = `deep[draft[${o0}]]`;
    const childAnswer = `final[${o1}|${o0}]`;
    expect(m.prompts()).toEqual([
      'Task: INPUT\n\n[System Instruction]\ndraft',
      'D: draft[INPUT]\n\n[System Instruction]\ndeepen',
      `Task: ${o0}\n\n[System Instruction]\ndraft`,
      `D: draft[${o0}]\n\n[System Instruction]\ndeepen`,
      `R: ${o1}\n\nTask: ${o0}\n\n[System Instruction]\nfinal`,
      `R: ${childAnswer}\n\nTask: INPUT\n\n[System Instruction]\nfinal`,
    ]);
    expect(result.answer).toBe(`final[${childAnswer}|INPUT]`);
    expect(result.trace.map((t) => [t.depth, t.stepId, t.recursionAnswer])).toEqual([
      [0, 'draft', undefined],
      [0, 'deepen', childAnswer],
      [1, 'draft', undefined],
      [1, 'deepen', undefined],
      [1, 'final', undefined],
      [0, 'final', undefined],
    ]);
    expect(result.usage).toEqual(accountingOf(m).usage);
  });

  it('at depth 2 builds each level’s answer on the answer of the level below, like a function call', async () => {
    const m = model();
    const result = await run({ config: recursive('final'), model: m, knobs: { depth: 2 } });
    const o0 = 'deep[draft[INPUT]]';
    const o1 = `deep[draft[${o0}]]`;
    const o2 = `deep[draft[${o1}]]`;
    const answer2 = `final[${o2}|${o1}]`; // the deepest child answers first
    const answer1 = `final[${answer2}|${o0}]`; // depth 1's final runs on it
    expect(m.prompts().slice(-2)).toEqual([
      `R: ${answer2}\n\nTask: ${o0}\n\n[System Instruction]\nfinal`,
      `R: ${answer1}\n\nTask: INPUT\n\n[System Instruction]\nfinal`,
    ]);
    expect(result.answer).toBe(`final[${answer1}|INPUT]`);
    expect(result.modelCalls).toBe(9);
    expect(result.trace.map((t) => [t.depth, t.stepId, t.recursionAnswer])).toEqual([
      [0, 'draft', undefined],
      [0, 'deepen', answer1],
      [1, 'draft', undefined],
      [1, 'deepen', answer2],
      [2, 'draft', undefined],
      [2, 'deepen', undefined],
      [2, 'final', undefined],
      [1, 'final', undefined],
      [0, 'final', undefined],
    ]);
    expect(result.usage).toEqual(accountingOf(m).usage);
    expect(result.spendNanos).toBe(accountingOf(m).spendNanos);
  });

  it('at depth 10 uses every paid call: dig then final answers final applied eleven times', async () => {
    const m = fakeModel((prompt) => (systemOf(prompt) === 'dig' ? `dig(${line(prompt, 'T')})` : `final(${line(prompt, 'R')})`));
    const config = ladder('final', [
      step('dig', [{ name: 'T', type: 'text', from: 'input.context' }], { recursion: { maxDepth: 10 } }),
      step('final', [{ name: 'R', type: 'ingest', from: { stepId: 'dig' } }]),
    ]);
    const result = await run({ config, model: m });
    expect(result.modelCalls).toBe(22);
    expect(m.prompts()).toHaveLength(22);
    expect(result.answer).toBe(`${'final('.repeat(11)}${'dig('.repeat(11)}INPUT${')'.repeat(22)}`);
  });

  it('answers with the deepest output when the recursion step is the exit', async () => {
    const m = model();
    const result = await run({ config: recursive('deepen'), model: m, knobs: { depth: 2 } });
    expect(result.answer).toBe('deep[draft[deep[draft[deep[draft[INPUT]]]]]]');
  });

  it('gives recursion children one pass only, numbered pass 1 whichever parent pass spawned them', async () => {
    const m = fakeModel((prompt, index) => `${systemOf(prompt)}#${index}`);
    const config = ladder(
      'b',
      [step('a', [{ name: 'T', type: 'text', from: 'input.context' }]), step('b', [], { recursion: { maxDepth: 1 } })],
      { loops: { name: 'Loops', type: 'loops', steps: [{ title: 'two', value: 2 }] } },
    );
    const result = await run({ config, model: m });
    expect(result.trace.map((t) => `${t.pass}:${t.depth}:${t.stepId}`)).toEqual([
      '1:0:a', '1:0:b', '1:1:a', '1:1:b', '2:0:a', '2:0:b', '1:1:a', '1:1:b',
    ]);
    expect(m.prompts()[2]).toBe('T: b#1\n\n[System Instruction]\na');
    expect(result.answer).toBe('b#7');
  });
});
