import { describe, expect, it } from 'vitest';
import type { Knob, LadderConfig } from '../../../src/ladders/language/config.js';
import { ApiError } from '../../../src/errors.js';
import { knobDefault, maxDepthOf, nodeCount, passCount, resolveKnobs } from '../../../src/ladders/engine/knobs.js';

const knob = (type: Knob['type'], values: number[], defaultIndex?: number): Knob => ({
  name: type,
  type,
  steps: values.map((value, i) => ({ title: `v${value}`, value, ...(i === defaultIndex ? { default: true } : {}) })),
});

const config: LadderConfig = {
  name: 'knobs',
  exit: 'a',
  knobs: {
    loops: knob('loops', [1, 2, 3], 1),
    depth: knob('recursion', [0, 4]),
    width: knob('nodes', [2, 5, 8], 2),
    temperature: knob('generic', [0.1, 0.5, 0.9], 1),
  },
  steps: [
    { id: 'a', name: 'A', type: 'normal', nodes: '{{knobs.width}}', recursion: { maxDepth: '{{knobs.depth}}' } },
    { id: 'b', name: 'B', type: 'normal', nodes: 3 },
    { id: 'c', name: 'C', type: 'normal' },
  ],
};

function thrown(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('resolveKnobs', () => {
  it('uses the step marked default, else the first step', () => {
    expect(resolveKnobs(config, undefined)).toEqual({ loops: 2, depth: 0, width: 8, temperature: 0.5 });
    expect(knobDefault(knob('generic', [7, 9]))).toBe(7);
  });

  it('treats null, a missing object and an empty object as no overrides', () => {
    const defaults = resolveKnobs(config, undefined);
    expect(resolveKnobs(config, null)).toEqual(defaults);
    expect(resolveKnobs(config, {})).toEqual(defaults);
    expect(resolveKnobs({ ...config, knobs: undefined }, undefined)).toEqual({});
  });

  it('takes requested values and clamps them into the range of the knob step values', () => {
    expect(resolveKnobs(config, { loops: 3, temperature: 0.3 })).toMatchObject({ loops: 3, temperature: 0.3 });
    expect(resolveKnobs(config, { loops: 10, depth: -2, temperature: 5 })).toMatchObject({ loops: 3, depth: 0, temperature: 0.9 });
    expect(resolveKnobs(config, { temperature: -1 })).toMatchObject({ temperature: 0.1 });
  });

  it('rounds loops, recursion and nodes knobs to the nearest integer after clamping, not generic ones', () => {
    expect(resolveKnobs(config, { loops: 1.4, depth: 2.5, width: 4.6, temperature: 0.55 })).toEqual({
      loops: 1,
      depth: 3,
      width: 5,
      temperature: 0.55,
    });
    expect(resolveKnobs(config, { loops: 3.9 })).toMatchObject({ loops: 3 });
  });

  it('rejects an unknown knob id, naming it and the knobs that exist', () => {
    const error = thrown(() => resolveKnobs(config, { widht: 3 }));
    expect(error).toMatchObject({ statusCode: 400, type: 'invalid_request_error', code: 'invalid_knob', param: 'knobs.widht' });
    expect(error.message).toBe('Unknown knob "widht": this ladder\'s knobs are "loops", "depth", "width", "temperature".');
    expect(thrown(() => resolveKnobs({ ...config, knobs: {} }, { x: 1 })).message).toBe('Unknown knob "x": this ladder has no knobs.');
    expect(thrown(() => resolveKnobs(config, { toString: 1 })).param).toBe('knobs.toString');
  });

  it('rejects a value that is not a finite number, naming the knob', () => {
    for (const [value, shown] of [
      ['3', 'a string'],
      [null, 'null'],
      [true, 'a boolean'],
      [[1], 'an array'],
      [{ v: 1 }, 'an object'],
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
    ] as const) {
      const error = thrown(() => resolveKnobs(config, { width: value }));
      expect(error).toMatchObject({ statusCode: 400, code: 'invalid_knob', param: 'knobs.width' });
      expect(error.message).toBe(`Knob "width" must be a finite number, not ${shown}.`);
    }
  });

  it('rejects a knobs member that is not an object', () => {
    for (const value of ['loops=2', 3, [1, 2], true]) {
      const error = thrown(() => resolveKnobs(config, value));
      expect(error).toMatchObject({ statusCode: 400, type: 'invalid_request_error', code: 'invalid_knobs', param: 'knobs' });
      expect(error.message).toBe('knobs must be an object mapping knob ids to numbers.');
    }
  });
});

describe('knob-driven counts', () => {
  const knobs = resolveKnobs(config, { width: 5, depth: 2 });
  const [a, b, c] = config.steps as [never, never, never];

  it('reads nodes from a number, a knob reference, or defaults to 1', () => {
    expect(nodeCount(a, knobs, config)).toBe(5);
    expect(nodeCount(b, knobs, config)).toBe(3);
    expect(nodeCount(c, knobs, config)).toBe(1);
  });

  it('reads recursion depth through its knob', () => {
    expect(maxDepthOf({ maxDepth: '{{knobs.depth}}' }, knobs, config)).toBe(2);
    expect(maxDepthOf({ maxDepth: 3 }, knobs, config)).toBe(3);
  });

  it('counts passes from the loops knob, 1 without one', () => {
    expect(passCount(config, knobs)).toBe(2);
    expect(passCount(config, { ...knobs, loops: 3 })).toBe(3);
    expect(passCount({ ...config, knobs: {} }, {})).toBe(1);
  });
});
