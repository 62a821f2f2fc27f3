// The playground's editor completes step ids, field, step and knob types, and knob ids, in YAML
// and JSON alike; the language's words are the validator's own.
import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/ladders/language/validator.js';
import { FIELD_TYPES, KNOB_TYPES, STEP_TYPES, ladderSuggestions } from '../../ui/src/ladder-completion.js';

/** The labels offered at the `|` in `marked`, and the text they would replace. */
function offered(marked: string): { labels: string[]; replaces: string } | null {
  const pos = marked.indexOf('|');
  const text = marked.slice(0, pos) + marked.slice(pos + 1);
  const found = ladderSuggestions(text, pos, (source) => parseDocument(source));
  return found && { labels: found.options.map((o) => o.label), replaces: text.slice(found.from, pos) };
}

const config = (cursorLine: string, at = 'fields') => `name: Demo
exit: answer
knobs:
  drafts: { name: Drafts, type: nodes, steps: [{ title: One, value: 1 }] }
  tone:
    name: Tone
    type: generic
    steps: [{ title: Calm, value: 0 }]
steps:
  - id: draft
    name: Draft
    type: normal
    fields:
      - { name: Question, type: text, from: input.context }
${at === 'fields' ? cursorLine : ''}
  - id: side
    name: Side
    type: group
    steps:
      - { id: left, name: Left, type: normal }
  - id: answer
    name: Answer
${at === 'step' ? cursorLine : '    type: normal'}
`;

describe('completion in the playground’s editor', () => {
  it('offers the document’s step ids after stepId, group children included and groups left out', () => {
    expect(offered(config('      - { name: Draft, type: ingest, from: { stepId: dr| } }'))).toEqual({ labels: ['draft', 'left', 'answer'], replaces: 'dr' });
    expect(offered(config('      - name: Draft\n        type: ingest\n        from:\n          stepId: |'))).toEqual({ labels: ['draft', 'left', 'answer'], replaces: '' });
  });

  it('offers step ids for the top-level exit only', () => {
    expect(offered(config('').replace('exit: answer', 'exit: a|'))?.labels).toEqual(['draft', 'left', 'answer']);
  });

  it('offers field types in a field, step types in a step, knob types in a knob', () => {
    expect(offered(config('      - { name: Draft, type: multi|, from: { stepId: draft } }'))).toEqual({ labels: FIELD_TYPES, replaces: 'multi' });
    expect(offered(config('    type: |', 'step'))?.labels).toEqual(STEP_TYPES);
    expect(offered(config('').replace('    type: generic', '    type: gen|'))).toEqual({ labels: KNOB_TYPES, replaces: 'gen' });
  });

  it('offers knob ids in a knob reference and in a knobInfo field', () => {
    expect(offered(config('').replace('    type: normal\n    fields', '    type: normal\n    nodes: "{{knobs.d|}}"\n    fields'))).toEqual({ labels: ['drafts', 'tone'], replaces: 'd' });
    expect(offered(config('      - { name: Tone, type: knobInfo, from: | }'))?.labels).toEqual(['drafts', 'tone']);
    expect(offered(config('      - { name: Question, type: text, from: | }'))?.labels).toEqual(['input.context']);
  });

  it('offers the words of loopRef and nodeRef', () => {
    expect(offered(config('      - { name: D, type: multi_ingest, from: { stepId: draft, loopRef: | } }'))?.labels).toEqual(['current', 'previous', 'accumulate']);
    expect(offered(config('      - { name: D, type: multi_ingest, from: { stepId: draft, nodeRef: acc| } }'))?.labels).toEqual(['previous', 'accumulate']);
  });

  it('works in JSON', () => {
    const json = JSON.stringify({ name: 'J', exit: 'b', steps: [{ id: 'a', name: 'A', type: 'normal' }, { id: 'b', name: 'B', type: 'normal', fields: [{ name: 'X', type: 'ingest', from: { stepId: 'QQ' } }] }] }, null, 2);
    expect(offered(json.replace('"stepId": "QQ"', '"stepId": "|"'))).toEqual({ labels: ['a', 'b'], replaces: '' });
    expect(offered(json.replace('"type": "ingest"', '"type": "in|"'))).toEqual({ labels: FIELD_TYPES, replaces: 'in' });
  });

  it('offers nothing for free text: names, prompts, unknown keys', () => {
    expect(offered(config('    name: Ans|', 'step'))).toBeNull();
    expect(offered(config('    systemPrompt: Write the type: |', 'step'))).toBeNull();
    expect(offered('name: Demo\nexit: |\nsteps: []\n')).toEqual({ labels: [], replaces: '' });
  });

  it('uses the validator’s own words for each kind of type', () => {
    const allowed = (config: unknown) => {
      const message = validateConfig(config).errors.find((e) => e.includes('"bogus"'))!;
      return [...message.matchAll(/"([^"]+)"/g)].map((m) => m[1]).filter((w) => w !== 'bogus');
    };
    const step = (extra: object) => ({ id: 's', name: 'S', type: 'normal', ...extra });
    expect(allowed({ name: 'N', exit: 's', steps: [step({ type: 'bogus' })] })).toEqual(STEP_TYPES);
    expect(allowed({ name: 'N', exit: 's', steps: [step({ fields: [{ name: 'F', type: 'bogus' }] })] })).toEqual(FIELD_TYPES);
    expect(allowed({ name: 'N', exit: 's', knobs: { k: { name: 'K', type: 'bogus', steps: [{ title: 'T', value: 1 }] } }, steps: [step({})] })).toEqual(KNOB_TYPES);
  });
});
