import { describe, expect, it } from 'vitest';
import { errorsOf, ingest, knob, ladder, step, text } from './validate-helpers.js';

const group = (id: string, steps: unknown[], extra = {}) => ({ id, name: id, type: 'group', steps, ...extra });

describe('step shape', () => {
  it('needs id, name and a known type', () => {
    expect(errorsOf(ladder([{ type: 'paralel' }], { exit: 'a' }))).toEqual([
      'steps[0].type: must be "normal", "sequential" or "group", not "paralel"',
      'steps[0].id: is required',
      'steps[0].name: is required',
    ]);
  });

  it('does not list unknown keys of a step whose type is unknown', () => {
    expect(errorsOf(ladder([{ id: 'a', name: 'A', type: 7, prompt: 'x' }]))).toEqual([
      'steps[0].type: must be "normal", "sequential" or "group"',
    ]);
  });

  it('rejects unexpected properties and checks optional types', () => {
    const bad = step('a', [text()], { systemPrompt: ['x'], continueIf: 1, nodes: true, recursion: 2, model: 'gpt' });
    expect(errorsOf(ladder([bad]))).toEqual([
      'steps[0].systemPrompt: must be a string',
      'steps[0].continueIf: must be a string',
      'steps[0].nodes: must be a number or a knob reference "{{knobs.<id>}}"',
      'steps[0].recursion: must be an object',
      'steps[0].model: unexpected property; a normal step has only id, name, type, fields, systemPrompt, nodes, continueIf, timeline and recursion',
    ]);
  });

  it('accepts any timeline value and stores it', () => {
    expect(errorsOf(ladder([step('a', [text()], { timeline: { lane: 2, color: 'red' } })]))).toEqual([]);
  });

  it('keeps child steps for groups', () => {
    expect(errorsOf(ladder([step('a', [text()], { steps: [] })]))).toEqual(['steps[0].steps: only a group step has child steps']);
  });
});

describe('step ids', () => {
  it('use only letters, digits, "_" and "-"', () => {
    expect(errorsOf(ladder([step('draft one'), step('')], { exit: 'draft one' }))).toEqual([
      'steps[0].id: a step id may use only letters, digits, "_" and "-"',
      'steps[1].id: a step id may use only letters, digits, "_" and "-"',
    ]);
  });

  it('are unique across the whole config, group children included', () => {
    const config = ladder([step('a'), group('g', [step('b'), step('a')]), step('b')]);
    expect(errorsOf(config)).toEqual([
      'steps[1].steps[1].id: "a" is already the id of steps[0]',
      'steps[2].id: "b" is already the id of steps[1].steps[0]',
    ]);
  });
});

describe('groups', () => {
  it('run normal and sequential children', () => {
    const config = ladder([group('g', [step('a'), step('b', [text()], { type: 'sequential' })]), step('c', [ingest('a'), ingest('b')])]);
    expect(errorsOf(config)).toEqual([]);
  });

  it('contain at least one step', () => {
    expect(errorsOf(ladder([group('g', []), step('a')]))).toEqual(['steps[0].steps: a group must contain at least one step']);
  });

  it('contain no groups', () => {
    expect(errorsOf(ladder([group('g', [group('h', [step('a')])]), step('b')]))).toEqual([
      'steps[0].steps[0].type: a group may contain only normal and sequential steps',
    ]);
  });

  it('have no fields, prompt, nodes, gate or recursion of their own', () => {
    const config = ladder([
      group('g', [step('a')], { fields: [], systemPrompt: 'x', nodes: 2, continueIf: 'YES', recursion: { maxDepth: 1 } }),
      step('b'),
    ]);
    expect(errorsOf(config)).toEqual([
      'steps[0].fields: a group step cannot have fields; only its child steps can',
      'steps[0].systemPrompt: a group step cannot have systemPrompt; only its child steps can',
      'steps[0].nodes: a group step cannot have nodes; only its child steps can',
      'steps[0].continueIf: a group step cannot have continueIf; only its child steps can',
      'steps[0].recursion: a group step cannot have recursion; only its child steps can',
    ]);
  });

  it('need a steps array', () => {
    expect(errorsOf(ladder([{ id: 'g', name: 'G', type: 'group' }, step('a')]))).toEqual(['steps[0].steps: is required']);
  });
});

describe('nodes', () => {
  it('is a whole number of at least 1', () => {
    expect(errorsOf(ladder([step('a', [text()], { nodes: 3 })]))).toEqual([]);
    expect(errorsOf(ladder([step('a', [text()], { nodes: 0 })]))).toEqual(['steps[0].nodes: must be a whole number of at least 1']);
    expect(errorsOf(ladder([step('a', [text()], { nodes: 1.5 })]))).toEqual(['steps[0].nodes: must be a whole number of at least 1']);
  });

  it('takes a knob reference only as its whole value', () => {
    const knobs = { width: knob('nodes', [1, 3]) };
    expect(errorsOf(ladder([step('a', [text()], { nodes: '{{knobs.width}}' })], { knobs }))).toEqual([]);
    expect(errorsOf(ladder([step('a', [text()], { nodes: '{{knobs.width}} ' })], { knobs }))).toEqual([
      'steps[0].nodes: must be a whole number or exactly "{{knobs.<id>}}"',
      'knobs.width: nodes knob "width" is not used; set a step\'s nodes to "{{knobs.width}}"',
    ]);
    expect(errorsOf(ladder([step('a', [text()], { nodes: '3' })]))).toEqual([
      'steps[0].nodes: must be a whole number or exactly "{{knobs.<id>}}"',
    ]);
  });

  it('reads an existing knob of type nodes', () => {
    const knobs = { passes: knob('loops', [1, 2]) };
    expect(errorsOf(ladder([step('a', [text()], { nodes: '{{knobs.width}}' })], { knobs }))).toEqual([
      'steps[0].nodes: no knob has id "width"',
    ]);
    expect(errorsOf(ladder([step('a', [text()], { nodes: '{{knobs.passes}}' })], { knobs }))).toEqual([
      'steps[0].nodes: knob "passes" is a loops knob, but nodes needs a nodes knob',
    ]);
  });
});

describe('recursion', () => {
  const recursive = (maxDepth: unknown, extra = {}) => ladder([step('a', [text()], { recursion: { maxDepth }, ...extra })]);

  it('takes a literal depth from 0 to 10', () => {
    expect(errorsOf(recursive(0))).toEqual([]);
    expect(errorsOf(recursive(10))).toEqual([]);
    expect(errorsOf(recursive(11))).toEqual(['steps[0].recursion.maxDepth: must be a whole number from 0 to 10']);
    expect(errorsOf(recursive(-1))).toEqual(['steps[0].recursion.maxDepth: must be a whole number from 0 to 10']);
    expect(errorsOf(recursive(1.5))).toEqual(['steps[0].recursion.maxDepth: must be a whole number from 0 to 10']);
  });

  it('follows a configured depth limit', () => {
    expect(errorsOf(recursive(4), { maxRecursionDepth: 3 })).toEqual([
      'steps[0].recursion.maxDepth: must be a whole number from 0 to 3',
    ]);
  });

  it('needs maxDepth and nothing else', () => {
    expect(errorsOf(ladder([step('a', [text()], { recursion: { depth: 2 } })]))).toEqual([
      'steps[0].recursion.depth: unexpected property; recursion has only maxDepth',
      'steps[0].recursion.maxDepth: is required',
    ]);
  });

  it('reads a recursion knob through a reference', () => {
    const knobs = { depth: knob('recursion', [0, 2]), width: knob('nodes', [1, 2]) };
    const withDepth = (maxDepth: string) =>
      ladder([step('a', [text()], { nodes: '{{knobs.width}}', recursion: { maxDepth } })], { knobs });
    expect(errorsOf(withDepth('{{knobs.depth}}'))).toEqual([]);
    expect(errorsOf(withDepth('{{knobs.width}}'))).toEqual([
      'steps[0].recursion.maxDepth: knob "width" is a nodes knob, but maxDepth needs a recursion knob',
      'knobs.depth: recursion knob "depth" is not used; set the recursion step\'s maxDepth to "{{knobs.depth}}"',
    ]);
    expect(errorsOf(withDepth('{{knobs.deep}}'))).toEqual([
      'steps[0].recursion.maxDepth: no knob has id "deep"',
      'knobs.depth: recursion knob "depth" is not used; set the recursion step\'s maxDepth to "{{knobs.depth}}"',
    ]);
  });

  it('belongs to at most one step', () => {
    const config = ladder([step('a', [text()], { recursion: { maxDepth: 1 } }), step('b', [text()], { recursion: { maxDepth: 1 } })]);
    expect(errorsOf(config)).toEqual(['steps[1].recursion: only one step may have recursion, and steps[0] already does']);
  });

  it('is not allowed inside a group', () => {
    const config = ladder([group('g', [step('a', [text()], { recursion: { maxDepth: 1 } })]), step('b')]);
    expect(errorsOf(config)).toEqual(['steps[0].steps[0].recursion: a step inside a group cannot have recursion']);
  });
});

describe('gates and prompts', () => {
  it('accept a plain continueIf', () => {
    expect(errorsOf(ladder([step('a', [text()], { continueIf: 'YES' })]))).toEqual([]);
  });

  it('reject an empty continueIf', () => {
    expect(errorsOf(ladder([step('a', [text()], { continueIf: ' ' })]))).toEqual([
      'steps[0].continueIf: must not be empty; remove continueIf to keep every node',
    ]);
  });

  it('reject a continueIf no trimmed output could equal', () => {
    expect(errorsOf(ladder([step('a', [text()], { continueIf: 'YES\n' })]))).toEqual([
      'steps[0].continueIf: "YES\\n" starts or ends with white space, but outputs are trimmed before the comparison, so no node could pass',
    ]);
  });

  it('reject knob references inside a system prompt or a gate', () => {
    const knobs = { tone: knob('generic', [1, 2]) };
    const config = ladder([step('a', [text()], { systemPrompt: 'Use tone {{knobs.tone}}.', continueIf: '{{knobs.tone}}' })], { knobs });
    const sentence = "knob references work only as the whole value of nodes or recursion.maxDepth; use a knobInfo field to give a knob's value to the model";
    expect(errorsOf(config)).toEqual([`steps[0].systemPrompt: ${sentence}`, `steps[0].continueIf: ${sentence}`]);
  });
});
