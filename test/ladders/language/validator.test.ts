import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/ladders/language/validator.js';
import { Issues, type Path } from '../../../src/ladders/language/validation-issues.js';
import { gatedTreeOfThought, minimalLadder, recursiveRefinement } from '../examples.js';
import { errorsOf, ingest, knob, ladder, step, text } from './validate-helpers.js';

describe('the published examples', () => {
  it.each([
    ['a minimal two-step ladder', minimalLadder],
    ['a gated tree of thought', gatedTreeOfThought],
    ['a recursive multi-loop refinement', recursiveRefinement],
  ])('accepts %s and returns a copy of it', (_name, config) => {
    const result = validateConfig(config);
    expect(result).toEqual({ valid: true, errors: [], errorCount: 0, config });
    if (result.valid) expect(result.config).not.toBe(config);
  });
});

describe('the config as a whole', () => {
  it.each([[null], [[]], ['ladder'], [3]])('rejects %j, which is not an object', (input) => {
    expect(validateConfig(input)).toEqual({ valid: false, errors: ['config: must be an object'], errorCount: 1 });
  });

  it('refuses absurd nesting anywhere, even in timeline, without exhausting the stack', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const config = { ...minimalLadder, steps: minimalLadder.steps.map((s, i) => (i === 0 ? { ...s, timeline: deep } : s)) };
    expect(validateConfig(config)).toEqual({ valid: false, errors: ['config: is nested more than 32 levels deep'], errorCount: 1 });
    expect(validateConfig(deep)).toEqual({ valid: false, errors: ['config: is nested more than 32 levels deep'], errorCount: 1 });
  });

  it('refuses text that is not valid Unicode, in values and in keys', () => {
    const unpaired = { valid: false, errors: ['config: contains text that is not valid Unicode (an unpaired surrogate)'], errorCount: 1 };
    expect(validateConfig({ ...minimalLadder, name: 'a\ud800b' })).toEqual(unpaired);
    expect(validateConfig({ ...minimalLadder, knobs: { ['k\udc00']: {} } })).toEqual(unpaired);
    expect(validateConfig({ ...minimalLadder, name: 'emoji 😀 is fine' }).valid).toBe(true);
  });

  it('accepts a timeline nested within the bound', () => {
    let timeline: unknown = 'leaf';
    for (let i = 0; i < 25; i++) timeline = { a: timeline };
    const config = { ...minimalLadder, steps: minimalLadder.steps.map((s, i) => (i === 0 ? { ...s, timeline } : s)) };
    expect(validateConfig(config).valid).toBe(true);
  });

  it('names every missing required key', () => {
    expect(errorsOf({})).toEqual(['name: is required', 'exit: is required', 'steps: is required']);
  });

  it('rejects unexpected top-level keys, listing the allowed ones', () => {
    expect(errorsOf({ ...minimalLadder, id: 'x', version: 2 })).toEqual([
      'id: unexpected property; a ladder config has only name, exit, steps, description, allowedTargets, knobs and executionBudget',
      'version: unexpected property; a ladder config has only name, exit, steps, description, allowedTargets, knobs and executionBudget',
    ]);
  });

  it('checks the types of top-level keys', () => {
    expect(errorsOf({ name: '', description: 7, exit: 1, knobs: [], steps: {}, executionBudget: 5 })).toEqual([
      'name: must be a non-empty string',
      'description: must be a string',
      'exit: must be a string',
      'knobs: must be an object',
      'steps: must be an array',
      'executionBudget: must be an object',
    ]);
  });

  it('needs at least one step', () => {
    expect(errorsOf({ name: 'Empty', exit: 'a', steps: [] })).toEqual([
      'exit: no step has id "a"',
      'steps: must contain at least one step',
    ]);
  });
});

describe('exit', () => {
  it('must name an existing step', () => {
    expect(errorsOf(ladder([step('a')], { exit: 'b' }))).toEqual(['exit: no step has id "b"']);
  });

  it('cannot be a group', () => {
    const group = { id: 'g', name: 'G', type: 'group', steps: [step('a')] };
    expect(errorsOf(ladder([group], { exit: 'g' }))).toEqual([
      'exit: "g" is a group, which has no output of its own; name one of its child steps or another step',
    ]);
  });

  it('may be a child of a group', () => {
    const group = { id: 'g', name: 'G', type: 'group', steps: [step('a'), step('b')] };
    expect(errorsOf(ladder([group], { exit: 'b' }))).toEqual([]);
  });
});

describe('allowedTargets', () => {
  const withTargets = (allowedTargets: unknown) => errorsOf({ ...minimalLadder, allowedTargets });

  it('accepts universal and constrained lists, "*" alone', () => {
    expect(withTargets({ strategy: 'universal' })).toEqual([]);
    expect(withTargets({ strategy: 'constrained', providers: ['openai', 'anthropic'], models: ['*'] })).toEqual([]);
  });

  it('rejects an unknown strategy', () => {
    expect(withTargets({ strategy: 'open' })).toEqual(['allowedTargets.strategy: must be "universal" or "constrained", not "open"']);
  });

  it('has no lists in universal mode', () => {
    expect(withTargets({ strategy: 'universal', models: ['gpt-4o'] })).toEqual([
      'allowedTargets.models: a universal allowedTargets accepts every model and lists nothing',
    ]);
  });

  it('needs both lists in constrained mode', () => {
    expect(withTargets({ strategy: 'constrained', models: ['gpt-4o'] })).toEqual(['allowedTargets.providers: is required']);
  });

  it('needs non-empty lists of non-empty strings', () => {
    expect(withTargets({ strategy: 'constrained', providers: [], models: ['gpt-4o', '', 3] })).toEqual([
      'allowedTargets.models[2]: must be a string',
      'allowedTargets.providers: must list at least one provider, or "*" for any provider',
      'allowedTargets.models[1]: must be a non-empty string',
    ]);
  });

  it('keeps "*" alone', () => {
    expect(withTargets({ strategy: 'constrained', providers: ['*', 'openai'], models: ['gpt-4o', '*'] })).toEqual([
      'allowedTargets.providers: "*" must stand alone; it already allows every provider',
      'allowedTargets.models: "*" must stand alone; it already allows every model',
    ]);
  });
});

describe('executionBudget', () => {
  const withBudget = (executionBudget: unknown, cap?: number) =>
    errorsOf({ ...minimalLadder, executionBudget }, cap === undefined ? undefined : { maxSpendCap: cap });

  it('accepts a positive amount up to the platform maximum', () => {
    expect(withBudget({ maxSpend: 0.25 })).toEqual([]);
    expect(withBudget({ maxSpend: 50 })).toEqual([]);
  });

  it('must be greater than 0', () => {
    expect(withBudget({ maxSpend: 0 })).toEqual(['executionBudget.maxSpend: must be greater than 0']);
    expect(withBudget({ maxSpend: -1 })).toEqual(['executionBudget.maxSpend: must be greater than 0']);
  });

  it('must not exceed the platform maximum of 50', () => {
    expect(withBudget({ maxSpend: 50.01 })).toEqual(['executionBudget.maxSpend: 50.01 is above the platform maximum of 50 (USD)']);
  });

  it('follows a configured cap', () => {
    expect(withBudget({ maxSpend: 20 }, 10)).toEqual(['executionBudget.maxSpend: 20 is above the platform maximum of 10 (USD)']);
  });

  it('needs a numeric maxSpend and nothing else', () => {
    expect(withBudget({ maxSpend: '5', currency: 'EUR' })).toEqual([
      'executionBudget.maxSpend: must be a number',
      'executionBudget.currency: unexpected property; executionBudget has only maxSpend',
    ]);
    expect(withBudget({})).toEqual(['executionBudget.maxSpend: is required']);
  });
});

describe('reporting', () => {
  it('reports every problem: schema errors first, then meaning errors, each in document order', () => {
    const config = {
      name: 'Broken',
      exit: 'missing',
      knobs: { width: knob('nodes', [0, 2]) },
      steps: [
        step('draft', [text(), { name: 'Extra', type: 'text', from: 'input.text' }], { nodes: 2.5 }),
        step('draft', [ingest('drfat')], { prompt: 'hi' }),
        { id: 'g', name: 'G', type: 'group', steps: [], nodes: 2 },
      ],
      executionBudget: { maxSpend: 100 },
    };
    expect(errorsOf(config)).toEqual([
      'steps[1].prompt: unexpected property; a normal step has only id, name, type, fields, systemPrompt, nodes, continueIf, timeline and recursion',
      'steps[2].nodes: a group step cannot have nodes; only its child steps can',
      'exit: no step has id "missing"',
      'knobs.width: nodes knob "width" is not used; set a step\'s nodes to "{{knobs.width}}"',
      "knobs.width.steps[0].value: a nodes knob's values must be whole numbers of at least 1",
      'steps[0].fields[1].from: unknown source "input.text"; the only text source is "input.context"',
      'steps[0].nodes: must be a whole number of at least 1',
      'steps[1].id: "draft" is already the id of steps[0]',
      'steps[1].fields[0].from.stepId: no step has id "drfat"',
      'steps[2].steps: a group must contain at least one step',
      'executionBudget.maxSpend: 100 is above the platform maximum of 50 (USD)',
    ]);
  });

  it('places the error about a missing key after the rest of its object', () => {
    expect(errorsOf(ladder([{ id: 'a', type: 'normal', systemPrompt: 1 }]))).toEqual([
      'steps[0].systemPrompt: must be a string',
      'steps[0].name: is required',
    ]);
  });

  it('skips "no such id" checks while some step id is unreadable, to avoid false alarms', () => {
    const config = ladder([{ name: 'no id', type: 'normal' }, step('b', [ingest('a')])], { exit: 'a' });
    expect(errorsOf(config)).toEqual(['steps[0].id: is required']);
  });

  it('skips "no such knob" checks while knobs is not an object', () => {
    const config = ladder([step('a', [text()], { nodes: '{{knobs.width}}' })], { knobs: null });
    expect(errorsOf(config)).toEqual(['knobs: must be an object']);
  });

  it('quotes keys that are not plain identifiers', () => {
    expect(errorsOf({ ...minimalLadder, knobs: { 'a b': knob('generic', [1]) } })).toEqual([
      'knobs["a b"]: a knob id may use only letters, digits, "_" and "-"',
    ]);
  });
});

describe('a capped list of issues', () => {
  it('keeps exactly the first issues in document order, whatever order they are reported in', () => {
    const document = { b: [{ x: 1, y: 2 }, { x: 3 }], a: { k: 1 }, c: 'z' };
    const paths: Path[] = [['b', 0, 'y'], ['a', 'missing'], ['c'], ['b', 1], ['b', 0], ['b', 0, 'x'], ['a'], ['missing'], ['b', 1, 'x'], ['b', 0, 'nope'], ['a', 'k'], []];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 50; round++) {
      const reported = [...paths].sort(() => random() - 0.5).map((path, i) => ({ path, message: `m${i}` }));
      const all = new Issues(document);
      const capped = new Issues(document, 5);
      for (const { path, message } of reported) {
        all.add(path, message);
        capped.add(path, message);
      }
      expect(capped.count).toBe(paths.length);
      expect(capped.messages()).toEqual(all.messages().slice(0, 5));
    }
    const all = new Issues(document);
    for (const path of paths) all.add(path, 'x');
    expect(all.messages().map((m) => m.slice(0, -3))).toEqual(['config', 'b[0]', 'b[0].x', 'b[0].y', 'b[0].nope', 'b[1]', 'b[1].x', 'a', 'a.k', 'a.missing', 'c', 'missing']);
  });
});
