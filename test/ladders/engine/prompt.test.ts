import { describe, expect, it } from 'vitest';
import type { ModelStep } from '../../../src/ladders/language/config.js';
import { assemblePrompt, buildPrompt, type FieldSources } from '../../../src/ladders/engine/prompt.js';

describe('assemblePrompt', () => {
  it('renders each field as "Name: value", in order, separated by a blank line, then the system prompt', () => {
    const prompt = assemblePrompt(
      [
        { name: 'Question', kind: 'single', value: 'Why is the sky blue?' },
        { name: 'Draft', kind: 'single', value: 'Rayleigh.' },
      ],
      'Improve the draft.',
    );
    expect(prompt).toBe('Question: Why is the sky blue?\n\nDraft: Rayleigh.\n\n[System Instruction]\nImprove the draft.');
  });

  it('renders a list as one numbered line per item, numbered by the item labels', () => {
    const prompt = assemblePrompt([
      { name: 'Idea', kind: 'list', items: [{ label: '1', text: 'a' }, { label: '3', text: 'c' }] },
      { name: 'Note', kind: 'single', value: 'n' },
    ]);
    expect(prompt).toBe('Idea 1: a\nIdea 3: c\n\nNote: n');
  });

  it('leaves no line at all for an empty list, and "Name: " for an empty value', () => {
    const prompt = assemblePrompt([
      { name: 'A', kind: 'single', value: '' },
      { name: 'B', kind: 'list', items: [] },
      { name: 'C', kind: 'single', value: 'c' },
    ]);
    expect(prompt).toBe('A: \n\nC: c');
  });

  it('has no leading blank line when a step has only a system prompt, and ignores an empty one', () => {
    expect(assemblePrompt([], 'Say hi.')).toBe('[System Instruction]\nSay hi.');
    expect(assemblePrompt([{ name: 'A', kind: 'single', value: 'a' }], '')).toBe('A: a');
    expect(assemblePrompt([])).toBe('');
  });

  it('keeps multi-line values as they are', () => {
    expect(assemblePrompt([{ name: 'A', kind: 'single', value: 'x\ny' }], 'p\nq')).toBe('A: x\ny\n\n[System Instruction]\np\nq');
  });
});

describe('buildPrompt', () => {
  const sources: FieldSources = {
    input: 'the input',
    knobs: { temp: 0.7, width: 3 },
    node: 2,
    single: (field) => `single(${field.from.stepId})`,
    list: (field) => [{ label: '1', text: `item of ${field.from.stepId}` }],
  };

  it('resolves every field type from its source', () => {
    const step: ModelStep = {
      id: 's',
      name: 'S',
      type: 'normal',
      fields: [
        { name: 'Input', type: 'text', from: 'input.context' },
        { name: 'Prior', type: 'ingest', from: { stepId: 'p' } },
        { name: 'All', type: 'multi_ingest', from: { stepId: 'q', nodeRef: 'accumulate' } },
        { name: 'Temperature', type: 'knobInfo', from: 'temp' },
        { name: 'Missing knob', type: 'knobInfo', from: 'nope' },
        { name: 'Node', type: 'nodeInfo' },
      ],
      systemPrompt: 'Go.',
    };
    expect(buildPrompt(step, sources)).toBe(
      [
        'Input: the input',
        'Prior: single(p)',
        'All 1: item of q',
        'Temperature: 0.7',
        'Missing knob: ',
        'Node: 2',
        '[System Instruction]\nGo.',
      ].join('\n\n'),
    );
  });

  it('builds an empty prompt for a step without fields or system prompt', () => {
    expect(buildPrompt({ id: 's', name: 'S', type: 'normal' }, sources)).toBe('');
  });
});
