// The playground puts each validation error on the line of the config it is about.
import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/ladders/language/validator.js';
import { jsonErrorPosition, lineOf, offsetOfPath, splitMessage } from '../../ui/src/locate.js';

const lineOfError = (text: string, message: string) => {
  const split = splitMessage(message);
  expect(split, message).not.toBeNull();
  return lineOf(text, offsetOfPath(parseDocument(text), split!.path)).line;
};

const yamlText = `name: Demo
exit: answer
steps:
  - id: draft
    name: Draft
    type: normal
    nodes: many
    fields:
      - name: Question
        type: text
        from: input.context
  - id: answer
    name: Answer
    type: normal
    fields:
      - name: Draft
        type: ingest
        from:
          stepId: drfat
`;

describe('locating validation errors', () => {
  it('splits the validator’s path from its sentence', () => {
    expect(splitMessage('steps[2].fields[0].from.stepId: no step has id "drfat"')).toEqual({
      path: ['steps', 2, 'fields', 0, 'from', 'stepId'], text: 'no step has id "drfat"',
    });
    expect(splitMessage('knobs["a b"].steps[0]: must be an object')).toEqual({ path: ['knobs', 'a b', 'steps', 0], text: 'must be an object' });
    expect(splitMessage('config: must be an object')).toEqual({ path: [], text: 'must be an object' });
    expect(splitMessage('no path here')).toBeNull();
  });

  it('puts each error of a real validation on the line of its YAML key', () => {
    const config = parseDocument(yamlText).toJS();
    const { errors } = validateConfig(config);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    const nodes = errors.find((e) => e.startsWith('steps[0].nodes'))!;
    const stepId = errors.find((e) => e.startsWith('steps[1].fields[0].from.stepId'))!;
    expect(lineOfError(yamlText, nodes)).toBe(7);
    expect(lineOfError(yamlText, stepId)).toBe(19);
  });

  it('finds the same places in JSON text', () => {
    const json = JSON.stringify(parseDocument(yamlText).toJS(), null, 2);
    const line = lineOfError(json, 'steps[1].fields[0].from.stepId: no step has id "drfat"');
    expect(json.split('\n')[line - 1]).toContain('"stepId": "drfat"');
  });

  it('falls back to the nearest existing parent for a missing key, and to the top for `config`', () => {
    expect(lineOfError(yamlText, 'steps[1].systemPrompt: is required')).toBe(12);
    expect(lineOfError(yamlText, 'knobs.depth: is unknown')).toBe(1);
    expect(lineOfError(yamlText, 'config: must have a name')).toBe(1);
  });

  it('reads JSON syntax error positions', () => {
    expect(jsonErrorPosition('{\n  "a": 1,\n}', "Expected double-quoted property name in JSON at position 12 (line 3 column 1)")).toEqual({ line: 3, column: 1 });
    expect(jsonErrorPosition('{\n  "a": 1,\n}', 'Unexpected token } in JSON at position 12')).toEqual({ line: 3, column: 1 });
  });
});
