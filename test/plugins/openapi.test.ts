import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, type TestApp } from '../helpers/build.js';

interface Operation {
  security?: unknown[];
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

describe('OpenAPI document and reference page', () => {
  let t: TestApp;
  let doc: { openapi: string; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };
  beforeAll(async () => {
    t = await build();
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(() => t.close());

  it('is OpenAPI 3 and lists the public API', () => {
    expect(doc.openapi).toMatch(/^3\./);
    for (const path of ['/v1/providers', '/v1/providers/{provider}', '/v1/validate', '/v1/{author}/{ladder}', '/v1/{author}/{ladder}/chat/completions', '/v1/providers/catalog', '/v1/admin/accounts', '/v1/admin/accounts/{username}/api-keys', '/v1/admin/api-keys/{id}', '/v1/chat/completions', '/v1/models', '/v1/models/{model}', '/healthz', '/readyz']) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(doc.components.schemas.Error).toBeDefined();
  });

  it('documents the background-run paths with every status they answer', () => {
    const codes = (path: string, method: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {}).sort();
    expect(codes('/v1/pipelines/instances', 'post')).toEqual(['202', '400', '401', '404', '409', '413', '422', '500']);
    expect(codes('/v1/pipelines/instances', 'get')).toEqual(['200', '400', '401', '500']);
    expect(codes('/v1/pipelines/instances/{id}', 'get')).toEqual(['200', '401', '404', '500']);
    expect(codes('/v1/pipelines/instances/{id}/trace', 'get')).toEqual(['200', '401', '404', '500']);
    expect(codes('/v1/pipelines/instances/{id}/cancel', 'post')).toEqual(['200', '401', '404', '409', '500']);
    const started = doc.paths['/v1/pipelines/instances']!.post! as Operation & { responses: Record<string, { headers?: Record<string, unknown> }> };
    expect(Object.keys(started.responses['202']!.headers ?? {})).toContain('location');
  });

  it("describes every member of OpenAI's chat request, and the new answer members", () => {
    const chat = doc.paths['/v1/chat/completions']!.post as unknown as {
      requestBody: { content: { 'application/json': { schema: { properties: Record<string, unknown>; additionalProperties: boolean } } } };
      responses: Record<string, { content: { 'application/json': { schema: any } } }>;
    };
    const request = chat.requestBody.content['application/json'].schema;
    for (const member of ['tools', 'tool_choice', 'response_format', 'n', 'stop', 'seed', 'top_p', 'logprobs', 'reasoning_effort', 'max_completion_tokens', 'user', 'metadata']) {
      expect(Object.keys(request.properties)).toContain(member);
    }
    expect(request.additionalProperties).toBe(false);
    const answer = chat.responses['200']!.content['application/json'].schema;
    expect(Object.keys(answer.properties.choices.items.properties.message.properties)).toEqual(expect.arrayContaining(['content', 'refusal', 'tool_calls']));
    expect(Object.keys(answer.properties.usage.properties)).toEqual(expect.arrayContaining(['prompt_tokens_details', 'completion_tokens_details']));
    const model = doc.paths['/v1/models/{model}']!.get as unknown as { parameters: Array<{ name: string; in: string }> };
    expect(model.parameters).toEqual([expect.objectContaining({ name: 'model', in: 'path' })]);
  });

  it('declares a success and an error response schema for every operation', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const statuses = Object.keys(operation.responses);
        expect(statuses.some((s) => s.startsWith('2')), `${method} ${path} has a 2xx response`).toBe(true);
        if (path !== '/healthz' && path !== '/v1/providers/catalog') {
          expect(statuses.some((s) => /^[45]/.test(s)), `${method} ${path} documents its errors`).toBe(true);
        }
      }
    }
  });

  it('marks only the catalog and health routes as needing no authentication', () => {
    const open = Object.entries(doc.paths).flatMap(([path, ops]) => Object.values(ops).filter((op) => op.security?.length === 0).map(() => path));
    expect(open.sort()).toEqual(['/healthz', '/readyz', '/v1/providers/catalog']);
  });

  it('serves a human-readable reference at /docs', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs' });
    const page = res.statusCode === 302 ? await t.app.inject({ method: 'GET', url: res.headers.location as string }) : res;
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('swagger');
  });
});
