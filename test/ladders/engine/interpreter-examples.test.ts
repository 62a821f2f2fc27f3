// The published example ladders, run end to end through the interpreter with a scripted model.
import { describe, expect, it } from 'vitest';
import { gatedTreeOfThought, minimalLadder, recursiveRefinement } from '../examples.js';
import { accountingOf, fakeModel, run, systemOf } from './interpreter-harness.js';

const SI = '[System Instruction]';

function stepNamer(config: { steps: unknown[] }) {
  const bySystemPrompt = new Map<string, string>();
  for (const step of config.steps as { id: string; systemPrompt?: string }[]) bySystemPrompt.set(step.systemPrompt ?? '', step.id);
  return (prompt: string) => bySystemPrompt.get(systemOf(prompt)) ?? '?';
}

describe('example ladders', () => {
  it('minimalLadder drafts, then refines the draft', async () => {
    const stepOf = stepNamer(minimalLadder);
    const model = fakeModel((prompt) => `${stepOf(prompt)} answer`);
    const result = await run({ config: minimalLadder, model, input: 'What is 2+2?' });
    expect(model.prompts()).toEqual([
      `Question: What is 2+2?\n\n${SI}\nAnswer the question.`,
      `Question: What is 2+2?\n\nDraft: draft answer\n\n${SI}\nImprove the draft so that it answers the question better. Reply with the improved answer only.`,
    ]);
    expect(result.answer).toBe('refine answer');
    expect(result.usage).toEqual(accountingOf(model).usage);
  });

  it('gatedTreeOfThought answers from the thoughts whose judge said YES', async () => {
    const stepOf = stepNamer(gatedTreeOfThought);
    const model = fakeModel((prompt) => {
      const step = stepOf(prompt);
      if (step === 'think') return `thought ${/^Thought number: (\d+)$/m.exec(prompt)?.[1]}`;
      if (step === 'judge') return Number(/^Thought to judge: (\d+)$/m.exec(prompt)?.[1]) % 2 === 1 ? 'YES' : 'NO';
      return 'final';
    });
    const result = await run({ config: gatedTreeOfThought, model, input: 'P' });
    expect(model.received).toHaveLength(7);
    expect(model.prompts()[3]).toBe(
      `Problem: P\n\nThought 1: thought 1\nThought 2: thought 2\nThought 3: thought 3\n\nThought to judge: 1\n\n${SI}\n` +
        'Reply YES if the thought with the number given in "Thought to judge" is sound, otherwise reply NO. Reply with one word.',
    );
    expect(model.prompts()[6]).toBe(
      `Problem: P\n\nThought 1: thought 1\nThought 2: thought 2\nThought 3: thought 3\n\nVerdict 1: YES\nVerdict 3: YES\n\n${SI}\n` +
        'Solve the problem using only the thoughts whose numbers have a verdict.',
    );
    expect(result.trace[1]?.nodes.map((n) => n.survived)).toEqual([true, false, true]);
    expect(result.answer).toBe('final');
  });

  it('gatedTreeOfThought follows the thoughts knob', async () => {
    const model = fakeModel(() => 'YES');
    await run({ config: gatedTreeOfThought, model, knobs: { thoughts: 5 } });
    expect(model.received).toHaveLength(11);
  });

  it('recursiveRefinement loops twice, recursing once per pass, critiquing in sequence', async () => {
    const stepOf = stepNamer(recursiveRefinement);
    const model = fakeModel((prompt, index) => `${stepOf(prompt)}#${index}`);
    const result = await run({ config: recursiveRefinement, model, input: 'T' });
    const system = (id: string) => (recursiveRefinement.steps.find((s) => s.id === id) as { systemPrompt: string }).systemPrompt;
    const prompts = model.prompts();

    expect(prompts.map((p) => stepOf(p))).toEqual([
      'draft', 'deepen', 'draft', 'deepen', 'critique', 'critique', 'polish', 'critique', 'critique', 'polish',
      'draft', 'deepen', 'draft', 'deepen', 'critique', 'critique', 'polish', 'critique', 'critique', 'polish',
    ]);
    // The recursion child (depth 1) starts from the root's deepen output, with one pass only.
    expect(prompts[2]).toBe(`Task: deepen#1\n\nPrevious answer: \n\n${SI}\n${system('draft')}`);
    expect(prompts[5]).toBe(`Answer: deepen#3\n\nEarlier critique: critique#4\n\nPass count: 2\n\n${SI}\n${system('critique')}`);
    expect(prompts[6]).toBe(`Task: deepen#1\n\nAnswer: deepen#3\n\nCritique 1: critique#4\nCritique 2: critique#5\n\n${SI}\n${system('polish')}`);
    // Back at the root, the child's answer replaces the deepen output.
    expect(prompts[7]).toBe(`Answer: polish#6\n\nEarlier critique: \n\nPass count: 2\n\n${SI}\n${system('critique')}`);
    expect(prompts[10]).toBe(`Task: T\n\nPrevious answer: polish#9\n\n${SI}\n${system('draft')}`);
    expect(prompts[12]).toBe(`Task: deepen#11\n\nPrevious answer: \n\n${SI}\n${system('draft')}`);
    expect(prompts[19]).toBe(
      `Task: T\n\nAnswer: polish#16\n\nCritique 1: critique#17\nCritique 2: critique#18\n\nEarlier answer 1: polish#9\n\n${SI}\n${system('polish')}`,
    );
    expect(result.answer).toBe('polish#19');
    expect(result.modelCalls).toBe(20);
    expect(result.usage).toEqual(accountingOf(model).usage);
    expect(result.spendNanos).toBe(accountingOf(model).spendNanos);
  });

  it('recursiveRefinement runs flat with one pass when its knobs say so', async () => {
    const model = fakeModel((_prompt, index) => `#${index}`);
    const result = await run({ config: recursiveRefinement, model, knobs: { passes: 1, depth: 0 } });
    expect(result.modelCalls).toBe(5);
    expect(result.answer).toBe('#4');
  });
});
