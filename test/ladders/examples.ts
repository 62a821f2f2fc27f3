// The three published example ladders, written from docs/ladder-language.md. The validator,
// interpreter and end-to-end tests all share them, so a change here is a change everywhere.
import type { LadderConfig } from '../../src/ladders/language/config.js';

/** Two steps: a draft, then a refinement that reads the draft. */
export const minimalLadder: LadderConfig = {
  name: 'Draft and refine',
  description: 'Writes a first answer, then improves it.',
  exit: 'refine',
  steps: [
    {
      id: 'draft',
      name: 'Draft',
      type: 'normal',
      fields: [{ name: 'Question', type: 'text', from: 'input.context' }],
      systemPrompt: 'Answer the question.',
    },
    {
      id: 'refine',
      name: 'Refine',
      type: 'normal',
      fields: [
        { name: 'Question', type: 'text', from: 'input.context' },
        { name: 'Draft', type: 'ingest', from: { stepId: 'draft' } },
      ],
      systemPrompt: 'Improve the draft so that it answers the question better. Reply with the improved answer only.',
    },
  ],
};

/**
 * N thoughts (a nodes knob), one judge node per thought behind a `continueIf: "YES"` gate,
 * then an answer built from the thoughts whose judge survived. The language has no
 * "same node number" reference, so judge k reads every thought and is told its number k.
 */
export const gatedTreeOfThought: LadderConfig = {
  name: 'Gated tree of thought',
  description: 'Generates several thoughts, keeps the sound ones, answers from them.',
  allowedTargets: { strategy: 'universal' },
  exit: 'answer',
  knobs: {
    thoughts: {
      name: 'Thoughts',
      type: 'nodes',
      input: 'slider',
      description: 'How many independent thoughts to generate and judge.',
      steps: [
        { title: 'Two', value: 2 },
        { title: 'Three', value: 3, default: true },
        { title: 'Five', value: 5 },
      ],
    },
  },
  steps: [
    {
      id: 'think',
      name: 'Think',
      type: 'normal',
      nodes: '{{knobs.thoughts}}',
      fields: [
        { name: 'Problem', type: 'text', from: 'input.context' },
        { name: 'Thought number', type: 'nodeInfo' },
      ],
      systemPrompt: 'Propose one distinct line of reasoning towards solving the problem.',
    },
    {
      id: 'judge',
      name: 'Judge',
      type: 'normal',
      nodes: '{{knobs.thoughts}}',
      continueIf: 'YES',
      fields: [
        { name: 'Problem', type: 'text', from: 'input.context' },
        { name: 'Thought', type: 'multi_ingest', from: { stepId: 'think', nodeRef: 'accumulate' } },
        { name: 'Thought to judge', type: 'nodeInfo' },
      ],
      systemPrompt: 'Reply YES if the thought with the number given in "Thought to judge" is sound, otherwise reply NO. Reply with one word.',
    },
    {
      id: 'answer',
      name: 'Answer',
      type: 'normal',
      fields: [
        { name: 'Problem', type: 'text', from: 'input.context' },
        { name: 'Thought', type: 'multi_ingest', from: { stepId: 'think', nodeRef: 'accumulate' } },
        { name: 'Verdict', type: 'multi_ingest', from: { stepId: 'judge', nodeRef: 'accumulate' } },
      ],
      systemPrompt: 'Solve the problem using only the thoughts whose numbers have a verdict.',
    },
  ],
};

/**
 * Several passes (loops knob) over draft, deepen (recursion), critique (sequential) and
 * polish; polish reads its own earlier passes, draft reads the previous pass's polish.
 */
export const recursiveRefinement: LadderConfig = {
  name: 'Recursive refinement',
  description: 'Drafts, deepens recursively, critiques in sequence and polishes over several passes.',
  allowedTargets: { strategy: 'constrained', providers: ['*'], models: ['gpt-4o-mini', 'claude-3-5-haiku-latest'] },
  exit: 'polish',
  executionBudget: { maxSpend: 2 },
  knobs: {
    passes: {
      name: 'Passes',
      type: 'loops',
      input: 'slider',
      steps: [
        { title: 'One', value: 1 },
        { title: 'Two', value: 2, default: true },
        { title: 'Three', value: 3 },
      ],
    },
    depth: {
      name: 'Depth',
      type: 'recursion',
      input: 'slider',
      steps: [
        { title: 'Flat', value: 0 },
        { title: 'Deep', value: 1, default: true },
        { title: 'Deeper', value: 2 },
      ],
    },
  },
  steps: [
    {
      id: 'draft',
      name: 'Draft',
      type: 'normal',
      fields: [
        { name: 'Task', type: 'text', from: 'input.context' },
        { name: 'Previous answer', type: 'ingest', from: { stepId: 'polish', loopRef: 'previous' } },
      ],
      systemPrompt: 'Write an answer to the task. If a previous answer is given, write a better one.',
    },
    {
      id: 'deepen',
      name: 'Deepen',
      type: 'normal',
      recursion: { maxDepth: '{{knobs.depth}}' },
      fields: [{ name: 'Draft', type: 'ingest', from: { stepId: 'draft' } }],
      systemPrompt: 'Rewrite the draft as a more detailed task statement.',
    },
    {
      id: 'critique',
      name: 'Critique',
      type: 'sequential',
      nodes: 2,
      fields: [
        { name: 'Answer', type: 'ingest', from: { stepId: 'deepen' } },
        { name: 'Earlier critique', type: 'ingest', from: { stepId: 'critique', nodeRef: 'previous' }, skipFirstNode: true },
        { name: 'Pass count', type: 'knobInfo', from: 'passes' },
      ],
      systemPrompt: 'Criticise the answer; do not repeat the earlier critique.',
    },
    {
      id: 'polish',
      name: 'Polish',
      type: 'normal',
      fields: [
        { name: 'Task', type: 'text', from: 'input.context' },
        { name: 'Answer', type: 'ingest', from: { stepId: 'deepen' } },
        { name: 'Critique', type: 'multi_ingest', from: { stepId: 'critique', nodeRef: 'accumulate' } },
        { name: 'Earlier answer', type: 'multi_ingest', from: { stepId: 'polish', loopRef: 'accumulate' } },
      ],
      systemPrompt: 'Write the final answer to the task, fixing every point of the critiques.',
    },
  ],
};
