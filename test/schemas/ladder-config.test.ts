// The ladder config schema of the OpenAPI document describes the language the validator checks:
// every config the validator accepts passes it, and shape mistakes fail both.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/ladders/language/parse-text.js';
import { validateConfig } from '../../src/ladders/language/validator.js';
import { ladderConfigExample } from '../../src/schemas/examples.js';
import { LadderConfigSchema } from '../../src/schemas/ladder-config.js';
import { gatedTreeOfThought, minimalLadder, recursiveRefinement } from '../ladders/examples.js';

const matches = new Ajv({ strict: true }).compile(LadderConfigSchema);

const published = readdirSync('examples')
  .filter((file) => file.endsWith('.yaml'))
  .map((file): [string, unknown] => [file, parseConfigText(readFileSync(path.join('examples', file), 'utf8'), file)]);

const knobbed = {
  name: 'Knobs',
  allowedTargets: { strategy: 'constrained', providers: ['*'], models: ['gpt-4o-mini'] },
  executionBudget: { maxSpend: 2 },
  knobs: {
    passes: { name: 'Passes', type: 'loops', input: 'slider', steps: [{ title: 'One', value: 1, default: true }, { title: 'Two', value: 2 }] },
    width: { name: 'Width', type: 'nodes', steps: [{ title: 'Narrow', value: 1 }, { title: 'Wide', value: 3 }] },
  },
  exit: 'pick',
  steps: [
    {
      id: 'views', name: 'Views', type: 'group',
      steps: [{ id: 'a', name: 'A', type: 'normal', nodes: '{{knobs.width}}', fields: [{ name: 'Q', type: 'text', from: 'input.context' }, { name: 'N', type: 'nodeInfo' }] }],
    },
    {
      id: 'pick', name: 'Pick', type: 'sequential', nodes: 2,
      fields: [
        { name: 'Views', type: 'multi_ingest', from: { stepId: 'a', nodeRef: 'accumulate' } },
        { name: 'Passes', type: 'knobInfo', from: 'passes' },
        { name: 'Earlier', type: 'ingest', from: { stepId: 'pick', nodeRef: 'previous' }, skipFirstNode: true },
      ],
      systemPrompt: 'Pick the best view.',
    },
  ],
};

describe('the ladder config schema of the OpenAPI document', () => {
  const valid: Array<[string, unknown]> = [
    ...published,
    ['minimalLadder', minimalLadder],
    ['gatedTreeOfThought', gatedTreeOfThought],
    ['recursiveRefinement', recursiveRefinement],
    ['the documented example', ladderConfigExample],
    ['every kind of knob, field and step', knobbed],
  ];

  it.each(valid)('accepts %s, which the validator accepts', (_name, config) => {
    expect(validateConfig(config)).toMatchObject({ valid: true });
    expect(matches(config), JSON.stringify(matches.errors)).toBe(true);
  });

  const broken: Array<[string, unknown]> = [
    ['no steps', { name: 'x', exit: 'a' }],
    ['an unknown top-level key', { ...minimalLadder, version: 2 }],
    ['an unknown step type', { ...minimalLadder, steps: [{ id: 'a', name: 'A', type: 'parallel' }] }],
    ['a group inside a group', { name: 'x', exit: 'a', steps: [{ id: 'g', name: 'G', type: 'group', steps: [{ id: 'h', name: 'H', type: 'group', steps: [] }] }] }],
    ['an unknown field type', { name: 'x', exit: 'a', steps: [{ id: 'a', name: 'A', type: 'normal', fields: [{ name: 'F', type: 'image', from: 'input.context' }] }] }],
    ['a nodeInfo field with from', { name: 'x', exit: 'a', steps: [{ id: 'a', name: 'A', type: 'normal', fields: [{ name: 'F', type: 'nodeInfo', from: 'x' }] }] }],
    ['providers on a universal allowedTargets', { ...minimalLadder, allowedTargets: { strategy: 'universal', providers: ['*'] } }],
    ['a knob of an unknown type', { ...minimalLadder, knobs: { k: { name: 'K', type: 'dial', steps: [{ title: 'a', value: 1 }] } } }],
    ['nodes that are a string but no knob reference', { name: 'x', exit: 'a', steps: [{ id: 'a', name: 'A', type: 'normal', nodes: 'three' }] }],
  ];

  it.each(broken)('rejects %s, as the validator does', (_name, config) => {
    expect(validateConfig(config)).toMatchObject({ valid: false });
    expect(matches(config)).toBe(false);
  });
});
