import { describe, expect, it } from 'vitest';
import { errorsOf, ingest, knob, ladder, multi, step, text } from './validate-helpers.js';

const sequential = (id: string, fields: Record<string, unknown>[], extra = {}) => step(id, fields, { type: 'sequential', nodes: 3, ...extra });
const group = (id: string, steps: unknown[]) => ({ id, name: id, type: 'group', steps });

describe('field shape', () => {
  it('needs a non-empty name and a known type', () => {
    expect(errorsOf(ladder([step('a', [{ name: '', type: 'textual' }])]))).toEqual([
      'steps[0].fields[0].name: must be a non-empty string',
      'steps[0].fields[0].type: must be "text", "ingest", "multi_ingest", "knobInfo" or "nodeInfo", not "textual"',
    ]);
  });

  it('needs from on every field but nodeInfo', () => {
    expect(errorsOf(ladder([step('a', [{ name: 'Q', type: 'text' }, { name: 'N', type: 'nodeInfo', from: 'node' }])]))).toEqual([
      'steps[0].fields[0].from: is required',
      'steps[0].fields[1].from: a nodeInfo field has no from; its value is always the node number',
    ]);
  });

  it('checks the shape of a step source', () => {
    const field = { name: 'In', type: 'ingest', from: { step: 'a', loopRef: 'last', nodeRef: 'first' } };
    expect(errorsOf(ladder([step('a'), step('b', [field])]))).toEqual([
      'steps[1].fields[0].from.step: unexpected property; a step source has only stepId, loopRef and nodeRef',
      'steps[1].fields[0].from.loopRef: must be "current", "previous" or "accumulate", not "last"',
      'steps[1].fields[0].from.nodeRef: must be a node number, "previous" or "accumulate"',
      'steps[1].fields[0].from.stepId: is required',
    ]);
  });

  it('allows skipFirstNode only on an ingest field', () => {
    const fields = [ingest('a', {}, { skipFirstNode: 'yes' }), { ...multi('a'), skipFirstNode: true }];
    expect(errorsOf(ladder([step('a'), step('b', fields)]))).toEqual([
      'steps[1].fields[0].skipFirstNode: must be true or false',
      'steps[1].fields[1].skipFirstNode: only an ingest field may have skipFirstNode',
    ]);
  });
});

describe('text fields', () => {
  it('read only "input.context"', () => {
    expect(errorsOf(ladder([step('a', [{ name: 'Q', type: 'text', from: 'input.messages' }])]))).toEqual([
      'steps[0].fields[0].from: unknown source "input.messages"; the only text source is "input.context"',
    ]);
  });
});

describe('knobInfo fields', () => {
  const knobs = { tone: knob('generic', [0, 1]) };
  const info = (from: string) => ladder([step('a', [{ name: 'Tone', type: 'knobInfo', from }])], { knobs });

  it('name an existing knob by its bare id', () => {
    expect(errorsOf(info('tone'))).toEqual([]);
    expect(errorsOf(info('mood'))).toEqual(['steps[0].fields[0].from: no knob has id "mood"']);
    expect(errorsOf(info('{{knobs.tone}}'))).toEqual([
      'steps[0].fields[0].from: write the knob id alone, as "tone", not as a knob reference',
    ]);
  });
});

describe('what a step may read', () => {
  it('names an existing step', () => {
    expect(errorsOf(ladder([step('draft'), step('b', [ingest('drfat')])]))).toEqual([
      'steps[1].fields[0].from.stepId: no step has id "drfat"',
    ]);
  });

  it('never names a group', () => {
    expect(errorsOf(ladder([group('g', [step('a')]), step('b', [ingest('g')])]))).toEqual([
      'steps[1].fields[0].from.stepId: "g" is a group, which has no output of its own; read one of its child steps',
    ]);
  });

  it('reads earlier steps in the current pass, later ones only across passes', () => {
    expect(errorsOf(ladder([step('a', [ingest('b')]), step('b')]))).toEqual([
      'steps[0].fields[0].from.stepId: "b" runs after this step; read it with loopRef "previous" or "accumulate"',
    ]);
    expect(errorsOf(ladder([step('a', [ingest('b', { loopRef: 'current' })]), step('b')]))).toEqual([
      'steps[0].fields[0].from.stepId: "b" runs after this step; read it with loopRef "previous" or "accumulate"',
    ]);
    expect(errorsOf(ladder([step('a', [ingest('b', { loopRef: 'previous' })]), step('b')]))).toEqual([]);
    expect(errorsOf(ladder([step('a', [multi('b', { loopRef: 'accumulate' })]), step('b')]))).toEqual([]);
  });

  it('lets only a sequential step read itself in the current pass', () => {
    expect(errorsOf(ladder([step('a', [ingest('a', { nodeRef: 'previous' })])]))).toEqual([
      'steps[0].fields[0].from.stepId: a normal step cannot read its own output in the current pass; only a sequential step can, with nodeRef "previous"',
    ]);
    expect(errorsOf(ladder([sequential('a', [ingest('a', { nodeRef: 'previous' }, { skipFirstNode: true })])]))).toEqual([]);
  });

  it('needs nodeRef "previous" when a sequential step reads itself in the current pass', () => {
    expect(errorsOf(ladder([sequential('a', [ingest('a')]), step('b')]))).toEqual([
      'steps[0].fields[0].from.nodeRef: a sequential step reading itself in the current pass needs nodeRef "previous"',
    ]);
    expect(errorsOf(ladder([sequential('a', [ingest('a', { nodeRef: 2 })])]))).toEqual([
      'steps[0].fields[0].from.nodeRef: a sequential step reading itself in the current pass needs nodeRef "previous"',
    ]);
  });

  it('lets any step read its own earlier passes', () => {
    expect(errorsOf(ladder([step('a', [ingest('a', { loopRef: 'previous' }), multi('a', { loopRef: 'accumulate' })])]))).toEqual([]);
  });

  it('keeps nodeRef "previous" for a sequential self-read', () => {
    expect(errorsOf(ladder([sequential('a', [text()]), step('b', [ingest('a', { nodeRef: 'previous' })])]))).toEqual([
      'steps[1].fields[0].from.nodeRef: "previous" is only for a sequential step reading its own previous node',
    ]);
    expect(errorsOf(ladder([sequential('a', [ingest('a', { loopRef: 'previous', nodeRef: 'previous' })])]))).toEqual([
      'steps[0].fields[0].from.nodeRef: "previous" is only for a sequential step reading its own previous node',
    ]);
  });

  it('never lets children of one group read each other in the current pass', () => {
    const config = ladder([
      group('g', [step('a', [ingest('b')]), step('b', [ingest('a', { loopRef: 'previous' })])]),
      step('c', [ingest('a'), ingest('b')]),
    ]);
    expect(errorsOf(config)).toEqual([
      'steps[0].steps[0].fields[0].from.stepId: "b" runs beside this step in group "g"; read it with loopRef "previous" or "accumulate"',
    ]);
  });

  it('lets a group child read steps before its group', () => {
    expect(errorsOf(ladder([step('a'), group('g', [step('b', [ingest('a')])]), step('c', [ingest('b')])]))).toEqual([]);
  });
});

describe('accumulate', () => {
  it('belongs to multi_ingest fields only', () => {
    expect(errorsOf(ladder([step('a'), step('b', [ingest('a', { loopRef: 'accumulate', nodeRef: 'accumulate' })])]))).toEqual([
      'steps[1].fields[0].from.loopRef: "accumulate" needs a multi_ingest field; an ingest field reads one output',
      'steps[1].fields[0].from.nodeRef: "accumulate" needs a multi_ingest field; an ingest field reads one output',
    ]);
  });

  it('is optional on a multi_ingest field, which then lists the surviving nodes of one pass', () => {
    expect(errorsOf(ladder([step('a', [text()], { nodes: 2 }), step('b', [multi('a', {}), multi('a', { nodeRef: 2 })])]))).toEqual([]);
  });

  it('may gather passes and nodes together', () => {
    expect(errorsOf(ladder([step('a'), step('b', [multi('a', { loopRef: 'accumulate', nodeRef: 'accumulate' })])]))).toEqual([]);
  });

  it('may gather one node across passes, or the nodes of the previous pass', () => {
    const fields = [multi('a', { loopRef: 'accumulate', nodeRef: 2 }), multi('a', { loopRef: 'previous', nodeRef: 'accumulate' })];
    expect(errorsOf(ladder([step('a', [text()], { nodes: 2 }), step('b', fields)]))).toEqual([]);
  });
});

describe('node numbers', () => {
  it('are whole numbers of at least 1', () => {
    expect(errorsOf(ladder([step('a', [text()], { nodes: 3 }), step('b', [ingest('a', { nodeRef: 0 }), ingest('a', { nodeRef: 1.5 })])]))).toEqual([
      'steps[1].fields[0].from.nodeRef: must be a whole number of at least 1',
      'steps[1].fields[1].from.nodeRef: must be a whole number of at least 1',
    ]);
  });

  it('stay within a literal node count, 1 by default', () => {
    expect(errorsOf(ladder([step('a', [text()], { nodes: 3 }), step('b', [ingest('a', { nodeRef: 3 })])]))).toEqual([]);
    expect(errorsOf(ladder([step('a', [text()], { nodes: 3 }), step('b', [ingest('a', { nodeRef: 4 })])]))).toEqual([
      'steps[1].fields[0].from.nodeRef: step "a" has only 3 nodes',
    ]);
    expect(errorsOf(ladder([step('a'), step('b', [ingest('a', { nodeRef: 2 })])]))).toEqual([
      'steps[1].fields[0].from.nodeRef: step "a" has only 1 node',
    ]);
  });

  it('stay within the largest value of a nodes knob', () => {
    const knobs = { width: knob('nodes', [2, 4]) };
    const reading = (nodeRef: number) =>
      ladder([step('a', [text()], { nodes: '{{knobs.width}}' }), step('b', [ingest('a', { nodeRef })])], { knobs });
    expect(errorsOf(reading(4))).toEqual([]);
    expect(errorsOf(reading(5))).toEqual(['steps[1].fields[0].from.nodeRef: step "a" has at most 4 nodes (knob "width")']);
  });
});
