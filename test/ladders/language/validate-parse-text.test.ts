import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseConfigText } from '../../../src/ladders/language/parse-text.js';
import { validateConfig } from '../../../src/ladders/language/validator.js';
import { recursiveRefinement } from '../examples.js';

describe('parseConfigText', () => {
  it('parses JSON and YAML configs to the same value', () => {
    const json = '{"name": "Ladder", "steps": [{"id": "a", "nodes": 2}]}';
    const yaml = 'name: Ladder\nsteps:\n  - id: a\n    nodes: 2\n';
    const expected = { name: 'Ladder', steps: [{ id: 'a', nodes: 2 }] };
    expect(parseConfigText(json, 'ladder.json')).toEqual(expected);
    expect(parseConfigText(yaml, 'ladder.yaml')).toEqual(expected);
    expect(parseConfigText(json, 'ladder.yml')).toEqual(expected);
  });

  it('names the file, line and column of a JSON syntax error', () => {
    expect(() => parseConfigText('{\n  "name": "x",\n}', 'ladder.json')).toThrow(
      'ladder.json:3:1: invalid JSON: expected double-quoted property name',
    );
    expect(() => parseConfigText('{\n  "nodes": }', 'ladder.json')).toThrow('ladder.json:2:12: invalid JSON: unexpected character "}"');
  });

  it('names the file, line and column of a YAML syntax error', () => {
    expect(() => parseConfigText('name: a\nsteps:\n  - id: a\n - id: b\n', 'ladder.yaml')).toThrow(/^ladder\.yaml:4:\d+: invalid YAML: /);
  });

  it('rejects duplicate YAML keys', () => {
    expect(() => parseConfigText('name: a\nname: b\n', 'ladder.yaml')).toThrow('ladder.yaml:2:1: invalid YAML: Map keys must be unique');
  });

  it('rejects an empty file', () => {
    expect(() => parseConfigText(' \n', 'ladder.yaml')).toThrow('ladder.yaml: the file is empty; expected a ladder config');
  });

  it('reads a YAML config that then validates', () => {
    const parsed = parseConfigText(stringify(recursiveRefinement), 'refinement.yaml');
    expect(validateConfig(parsed)).toEqual({ valid: true, errors: [], errorCount: 0, config: recursiveRefinement });
  });
});
