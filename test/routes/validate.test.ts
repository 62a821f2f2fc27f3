// POST /v1/validate: SPEC "Validation result", issue 4 item 2.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, createUser, type TestApp } from '../helpers/build.js';
import { gatedTreeOfThought, minimalLadder, recursiveRefinement } from '../ladders/examples.js';

describe('POST /v1/validate', () => {
  let testApp: TestApp;
  let app: FastifyInstance;
  let headers: Record<string, string>;

  const validate = (payload: unknown) => app.inject({ method: 'POST', url: '/v1/validate', headers, payload: payload as object });
  const rowCount = async (table: string) => Number((await testApp.database.query<{ n: string }>(`select count(*) as n from ${table}`))[0]!.n);

  beforeAll(async () => {
    testApp = await build();
    app = testApp.app;
    ({ headers } = await createUser(app));
  });
  afterAll(() => testApp.close());

  it.each([
    ['minimal', minimalLadder],
    ['gated tree of thought', gatedTreeOfThought],
    ['recursive refinement', recursiveRefinement],
  ])('accepts the published %s example', async (_name, config) => {
    const res = await validate({ config });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ valid: true, errors: [], error_count: 0 });
  });

  it('reports every problem of a config, each naming where it is', async () => {
    const config = {
      name: 'Broken',
      exit: 'nowhere',
      colour: 'blue',
      steps: [
        { id: 'a', name: 'A', type: 'paralel' },
        { id: 'b', name: 'B', type: 'normal', fields: [{ name: 'X', type: 'ingest', from: { stepId: 'drfat' } }] },
      ],
    };
    const res = await validate({ config });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      valid: false,
      errors: [
        'colour: unexpected property; a ladder config has only name, exit, steps, description, allowedTargets, knobs and executionBudget',
        'steps[0].type: must be "normal", "sequential" or "group", not "paralel"',
        'exit: no step has id "nowhere"',
        'steps[1].fields[0].from.stepId: no step has id "drfat"',
      ],
      error_count: 4,
    });
  });

  it('reports a maxSpend above the platform maximum of 50', async () => {
    const res = await validate({ config: { ...minimalLadder, executionBudget: { maxSpend: 60 } } });
    expect(res.json()).toEqual({ valid: false, errors: ['executionBudget.maxSpend: 60 is above the platform maximum of 50 (USD)'], error_count: 1 });
  });

  it('answers a config that is not an object with a validation error, not a request error', async () => {
    const res = await validate({ config: 'steps: []' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ valid: false, errors: ['config: must be an object'], error_count: 1 });
  });

  it('is 400 missing_required_field without config', async () => {
    const res = await validate({});
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: { message: 'Missing required field: config.', type: 'invalid_request_error', code: 'missing_required_field', param: 'config' },
    });
  });

  it('is 400 unknown_parameter for another member beside config', async () => {
    const res = await validate({ config: minimalLadder, save: true });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'unknown_parameter', param: 'save' });
  });

  it('saves and runs nothing', async () => {
    const before = { ladders: await rowCount('ladders'), versions: await rowCount('ladder_versions'), instances: await rowCount('instances') };
    await validate({ config: minimalLadder });
    await validate({ config: { name: 'x' } });
    expect({ ladders: await rowCount('ladders'), versions: await rowCount('ladder_versions'), instances: await rowCount('instances') }).toEqual(before);
    expect(before).toEqual({ ladders: 0, versions: 0, instances: 0 });
  });

  it('requires an API key', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/validate', payload: { config: minimalLadder } });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.type).toBe('authentication_error');
  });

  describe('a huge broken config', () => {
    // Close to the 1 MB body limit: 3,000 steps with three schema errors each, a missing
    // top-level name (listed last: it sorts after the whole document) and an exit to no step.
    const steps = Array.from({ length: 3000 }, (_, i) => ({ id: `s${i}`, name: 1, type: 'normal', fields: [{ name: '', type: 'text', from: 'input.context' }], oops: true, systemPrompt: 'Answer. '.repeat(24) }));
    const config = { exit: 'nowhere', steps };
    const expectedFirst = (i: number) => [
      `steps[${i}].name: must be a string`,
      `steps[${i}].fields[0].name: must be a non-empty string`,
      `steps[${i}].oops: unexpected property; a normal step has only id, name, type, fields, systemPrompt, nodes, continueIf, timeline and recursion`,
    ];

    it('lists the first 100 errors in document order, then how many more, with error_count', async () => {
      const payload = JSON.stringify({ config });
      expect(payload.length).toBeGreaterThan(900_000);
      const started = performance.now();
      const res = await app.inject({ method: 'POST', url: '/v1/validate', headers: { ...headers, 'content-type': 'application/json' }, payload });
      const elapsed = performance.now() - started;
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.valid).toBe(false);
      expect(body.error_count).toBe(9001);
      expect(body.errors).toHaveLength(101);
      expect(body.errors.slice(0, 99)).toEqual(Array.from({ length: 33 }, (_, i) => expectedFirst(i)).flat());
      expect(body.errors[99]).toBe('steps[33].name: must be a string');
      expect(body.errors[100]).toBe('config: 8901 more errors not listed (at most 100 are reported)');
      expect(res.body.length).toBeLessThan(20_000);
      // Generous: the machine running the tests is shared; it took seconds before the cap.
      expect(elapsed).toBeLessThan(3_000);
    });

    it('is refused on save with the same bounded list', async () => {
      const owner = await createUser(app);
      const res = await app.inject({ method: 'PUT', url: `/v1/${owner.username}/huge`, headers: owner.headers, payload: { config } });
      expect(res.statusCode).toBe(400);
      const error = res.json().error;
      expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_ladder_config', param: 'config' });
      expect(error.message.startsWith('The ladder config is invalid: steps[0].name: must be a string; steps[0].fields[0].name: must be')).toBe(true);
      expect(error.message.length).toBeLessThan(20_000);
      expect(error.message).toMatch(/; config: 8901 more errors not listed \(at most 100 are reported\)$/);
      expect(await testApp.database.query('select 1 from ladders where slug = $1', ['huge'])).toEqual([]);
    });
  });
});
