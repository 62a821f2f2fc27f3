// Issue 20, item 1: a recursion child is a function call. Through the real route and a fake
// vendor: every call a run pays for is used, and each level's answer is built on the answer
// of the level below, at depths 0, 1, 2 and 10.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask, echo, echoAccounting, instanceRow, promptsReceived, runLadder, saveLadder, SI, startHarness, userWithOpenAI, type Harness, type User } from './ladder-harness.js';

const dig = {
  name: 'Dig',
  allowedTargets: { strategy: 'universal' },
  executionBudget: { maxSpend: 2 },
  knobs: { depth: { name: 'Depth', type: 'recursion', input: 'slider', steps: [0, 1, 2, 10].map((value) => ({ title: `${value}`, value, ...(value === 0 ? { default: true } : {}) })) } },
  steps: [
    { id: 'dig', name: 'Dig', type: 'normal', recursion: { maxDepth: '{{knobs.depth}}' }, fields: [{ name: 'T', type: 'text', from: 'input.context' }], systemPrompt: 'dig' },
    { id: 'final', name: 'Final', type: 'normal', fields: [{ name: 'R', type: 'ingest', from: { stepId: 'dig' } }], systemPrompt: 'final' },
  ],
  exit: 'final',
};

describe('recursion as a function call', () => {
  let h: Harness;
  let user: User;
  beforeAll(async () => {
    h = await startHarness();
    user = await userWithOpenAI(h);
    await saveLadder(h, user, 'dig', dig);
  });
  afterAll(() => h.close());

  for (const depth of [0, 1, 2, 10]) {
    it(`at depth ${depth}: ${2 * (depth + 1)} calls, the deepest answers first and each final runs on the answer below`, async () => {
      h.fake.reset();
      const res = await runLadder(h, user, 'dig', ask('start', { knobs: { depth } }));
      expect(res.statusCode, res.body).toBe(200);
      const prompts = promptsReceived(h.fake);
      expect(prompts).toHaveLength(2 * (depth + 1));
      // Every dig first, each on the output of the one above; then every final, deepest first.
      expect(prompts[0]).toBe(`T: start\n\n${SI}\ndig`);
      for (let d = 1; d <= depth; d++) expect(prompts[d]).toBe(`T: ${echo(prompts[d - 1]!)}\n\n${SI}\ndig`);
      expect(prompts[depth + 1]).toBe(`R: ${echo(prompts[depth]!)}\n\n${SI}\nfinal`);
      for (let k = depth + 2; k < prompts.length; k++) expect(prompts[k]).toBe(`R: ${echo(prompts[k - 1]!)}\n\n${SI}\nfinal`);
      const answer = echo(prompts.at(-1)!);
      expect(res.json().choices[0].message.content).toBe(answer);
      const { usage, spendNanos } = echoAccounting(prompts);
      expect(res.json().usage).toEqual(usage);
      const row = await instanceRow(h, res.headers['x-ladder-instance'] as string);
      expect(row).toMatchObject({ status: 'completed', model_calls: 2 * (depth + 1), usage, answer });
      expect(Number(row.spend_nanos)).toBe(spendNanos);
      // The trace: each level's dig carries the answer of the level below (its final).
      const digs = row.trace!.filter((s) => s.stepId === 'dig');
      expect(digs.map((s) => s.depth)).toEqual(Array.from({ length: depth + 1 }, (_, d) => d));
      for (let d = 0; d < depth; d++) expect(digs[d]!.recursionAnswer).toBe(echo(prompts[2 * depth + 1 - (d + 1)]!).slice(0, 4000));
      expect(digs[depth]!.recursionAnswer).toBeUndefined();
    });
  }
});
