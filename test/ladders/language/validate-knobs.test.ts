import { describe, expect, it } from 'vitest';
import { parseKnobReference } from '../../../src/ladders/language/knob-reference.js';
import { errorsOf, knob, ladder, step, text } from './validate-helpers.js';

const withKnobs = (knobs: unknown, steps = [step('a')]) => errorsOf({ ...ladder(steps), knobs });

describe('knob shape', () => {
  it('needs name, type and steps, with known type and input', () => {
    expect(withKnobs({ k: { type: 'dial', input: 'knob', label: 'K' } })).toEqual([
      'knobs.k.type: must be "loops", "recursion", "nodes" or "generic", not "dial"',
      'knobs.k.input: must be "slider", not "knob"',
      'knobs.k.label: unexpected property; a knob has only name, type, steps, input and description',
      'knobs.k.name: is required',
      'knobs.k.steps: is required',
    ]);
  });

  it('checks each step: a title, a finite number, an optional default flag', () => {
    const steps = [{ title: 1, value: '2', default: 'yes' }, { value: Number.POSITIVE_INFINITY, note: '' }];
    expect(withKnobs({ k: { name: 'K', type: 'generic', steps } })).toEqual([
      'knobs.k.steps[0].title: must be a string',
      'knobs.k.steps[0].value: must be a number',
      'knobs.k.steps[0].default: must be true or false',
      'knobs.k.steps[1].value: must be a finite number',
      'knobs.k.steps[1].note: unexpected property; a knob step has only title, value and default',
      'knobs.k.steps[1].title: is required',
    ]);
  });

  it('must be an object', () => {
    expect(withKnobs({ k: 3 })).toEqual(['knobs.k: must be an object']);
  });
});

describe('knob values', () => {
  it('list at least one value', () => {
    expect(withKnobs({ k: knob('generic', []) })).toEqual(['knobs.k.steps: must list at least one value']);
  });

  it('take any finite number on a generic knob', () => {
    expect(withKnobs({ k: knob('generic', [-1.5, 0, 0.7]) })).toEqual([]);
  });

  it('have at most one default', () => {
    const k = { name: 'K', type: 'generic', steps: [1, 2, 3].map((value) => ({ title: `${value}`, value, default: value !== 2 })) };
    expect(withKnobs({ k })).toEqual(['knobs.k.steps[2].default: only one value may be the default, and knobs.k.steps[0] already is']);
  });

  it('are whole numbers of at least 1 on loops and nodes knobs', () => {
    const steps = [step('a', [text()], { nodes: '{{knobs.width}}' })];
    expect(withKnobs({ passes: knob('loops', [0, 1.5, 2]), width: knob('nodes', [0, 3]) }, steps)).toEqual([
      "knobs.passes.steps[0].value: a loops knob's values must be whole numbers of at least 1",
      "knobs.passes.steps[1].value: a loops knob's values must be whole numbers of at least 1",
      "knobs.width.steps[0].value: a nodes knob's values must be whole numbers of at least 1",
    ]);
  });

  it('are whole numbers from 0 to the depth limit on a recursion knob', () => {
    const steps = [step('a', [text()], { recursion: { maxDepth: '{{knobs.depth}}' } })];
    expect(withKnobs({ depth: knob('recursion', [-1, 0, 10, 11]) }, steps)).toEqual([
      "knobs.depth.steps[0].value: a recursion knob's values must be whole numbers from 0 to 10",
      "knobs.depth.steps[3].value: a recursion knob's values must be whole numbers from 0 to 10",
    ]);
  });
});

describe('knob types', () => {
  it('allow one loops knob', () => {
    expect(withKnobs({ a: knob('loops', [1, 2]), b: knob('loops', [1, 3]) })).toEqual([
      'knobs.b.type: only one loops knob is allowed, and "a" is already one',
    ]);
  });

  it('allow one recursion knob', () => {
    const steps = [step('a', [text()], { recursion: { maxDepth: '{{knobs.d1}}' } })];
    expect(withKnobs({ d1: knob('recursion', [1]), d2: knob('recursion', [2]) }, steps)).toEqual([
      'knobs.d2: recursion knob "d2" is not used; set the recursion step\'s maxDepth to "{{knobs.d2}}"',
      'knobs.d2.type: only one recursion knob is allowed, and "d1" is already one',
    ]);
  });

  it('allow any number of nodes and generic knobs', () => {
    const steps = [step('a', [text()], { nodes: '{{knobs.n1}}' }), step('b', [text()], { nodes: '{{knobs.n2}}' })];
    expect(withKnobs({ n1: knob('nodes', [1]), n2: knob('nodes', [2]), g1: knob('generic', [1]), g2: knob('generic', [1]) }, steps)).toEqual([]);
  });

  it('need a recursion knob to feed the recursion step', () => {
    expect(withKnobs({ depth: knob('recursion', [0, 1]) })).toEqual([
      'knobs.depth: recursion knob "depth" is not used; set the recursion step\'s maxDepth to "{{knobs.depth}}"',
    ]);
  });

  it('need a nodes knob to feed some step', () => {
    expect(withKnobs({ width: knob('nodes', [1, 2]) })).toEqual([
      'knobs.width: nodes knob "width" is not used; set a step\'s nodes to "{{knobs.width}}"',
    ]);
  });
});

describe('parseKnobReference', () => {
  it('returns the id of an exact reference', () => {
    expect(parseKnobReference('{{knobs.width}}')).toBe('width');
    expect(parseKnobReference('{{knobs.max_depth-2}}')).toBe('max_depth-2');
  });

  it.each([['{{ knobs.width }}'], ['{{knobs.width}} '], ['x{{knobs.width}}'], ['{{knobs.}}'], ['{{knob.width}}'], [3], [null]])(
    'returns null for %j',
    (value) => {
      expect(parseKnobReference(value)).toBeNull();
    },
  );
});
