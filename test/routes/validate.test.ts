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
    expect(res.json()).toEqual({ valid: true, errors: [] });
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
    });
  });

  it('reports a maxSpend above the platform maximum of 50', async () => {
    const res = await validate({ config: { ...minimalLadder, executionBudget: { maxSpend: 60 } } });
    expect(res.json()).toEqual({ valid: false, errors: ['executionBudget.maxSpend: 60 is above the platform maximum of 50 (USD)'] });
  });

  it('answers a config that is not an object with a validation error, not a request error', async () => {
    const res = await validate({ config: 'steps: []' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ valid: false, errors: ['config: must be an object'] });
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
});
