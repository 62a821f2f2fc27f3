import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, type TestApp } from '../helpers/build.js';
import { DOCS_CSP } from '../../src/plugins/openapi.js';

interface Media {
  schema: Record<string, unknown>;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Operation {
  operationId?: string;
  summary?: string;
  security?: unknown[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description?: string; content?: Record<string, Media> }>;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/** Every operation of the document as [`METHOD path`, operation]. */
function operationsOf(doc: { paths: Record<string, Record<string, Operation>> }): Array<[string, Operation]> {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).filter(([method]) => METHODS.has(method)).map(([method, op]): [string, Operation] => [`${method.toUpperCase()} ${path}`, op]),
  );
}

/** A media object's examples, named. */
function examplesOf(media: Media): Array<[string, unknown]> {
  const named: Array<[string, unknown]> = Object.entries(media.examples ?? {}).map(([name, e]) => [name, e.value]);
  return media.example === undefined ? named : [['example', media.example], ...named];
}

/** Every schema node of a tree that carries an `example`, with where it is. */
function nestedExamples(schema: unknown, at: string, out: Array<[string, Record<string, unknown>]> = []) {
  if (Array.isArray(schema)) schema.forEach((s, i) => nestedExamples(s, `${at}[${i}]`, out));
  else if (schema && typeof schema === 'object') {
    const node = schema as Record<string, unknown>;
    if ('example' in node && (typeof node.type === 'string' || node.anyOf || node.properties)) out.push([at, node]);
    for (const [key, value] of Object.entries(node)) if (key !== 'example') nestedExamples(value, `${at}.${key}`, out);
  }
  return out;
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

  it('gives every operation a unique camelCase operationId, a summary, and says what each response means', () => {
    const ids = operationsOf(doc).map(([where, op]) => {
      expect(op.operationId, `${where} has an operationId`).toMatch(/^[a-z][a-zA-Z]+$/);
      expect(op.summary, `${where} has a summary`).toBeTruthy();
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.description, `${where} ${status} has a description`).not.toBe('Default Response');
      }
      return op.operationId;
    });
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining([
      'createChatCompletion', 'listModels', 'retrieveModel', 'startInstance', 'getInstance', 'listInstances', 'cancelInstance',
      'getInstanceTrace', 'streamInstanceEvents', 'runLadder', 'getLadder', 'saveLadder', 'deleteLadder', 'listLadders',
      'validateLadderConfig', 'listProviders', 'addProvider',
    ]));
  });

  it('shows string unions as enums, never as anyOf of constants', () => {
    const unions: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}[${i}]`));
      if (!node || typeof node !== 'object') return;
      const { anyOf } = node as { anyOf?: Array<{ const?: unknown; enum?: unknown[] }> };
      if (anyOf && anyOf.filter((b) => typeof b.const === 'string' || b.enum?.length === 1).length > 1) unions.push(at);
      for (const [key, value] of Object.entries(node)) walk(value, `${at}.${key}`);
    };
    walk(doc.paths, 'paths');
    expect(unions).toEqual([]);
    const effort = (doc.paths['/v1/chat/completions']!.post!.requestBody!.content['application/json']!.schema as any).properties.reasoning_effort;
    expect(effort).toMatchObject({ type: 'string', nullable: true, enum: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', null] });
  });

  it('has an example for every request body and success response, each valid against its own schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const check = (where: string, schema: Record<string, unknown>, value: unknown) => {
      const validate = ajv.compile({ ...schema, components: doc.components });
      expect(validate(value), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    };
    let checked = 0;
    for (const [where, op] of operationsOf(doc)) {
      const media = [
        ...Object.entries(op.requestBody?.content ?? {}).map(([type, m]) => [`${where} request ${type}`, m] as const),
        ...Object.entries(op.responses).filter(([status]) => status.startsWith('2'))
          .flatMap(([status, r]) => Object.entries(r.content ?? {}).map(([type, m]) => [`${where} ${status} ${type}`, m] as const)),
      ];
      for (const [at, m] of media) {
        const examples = examplesOf(m);
        expect(examples.length, `${at} has an example`).toBeGreaterThan(0);
        for (const [name, value] of examples) check(`${at} (${name})`, m.schema, value);
        for (const [path, node] of nestedExamples(m.schema, 'schema')) check(`${at} ${path}`, node, node.example);
        checked += examples.length;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it("types the ladder config from the language's schema, wherever a config is sent or answered", () => {
    const config = doc.components.schemas.LadderConfig as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(config.properties)).toEqual(['name', 'description', 'allowedTargets', 'exit', 'knobs', 'steps', 'executionBudget']);
    expect(config.required).toEqual(['name', 'exit', 'steps']);
    const ref = { allOf: [{ $ref: '#/components/schemas/LadderConfig' }] };
    const body = (path: string, method: string) => (doc.paths[path]![method]!.requestBody!.content['application/json']!.schema as any).properties.config;
    expect(body('/v1/validate', 'post')).toMatchObject(ref);
    expect(body('/v1/{author}/{ladder}', 'put')).toMatchObject(ref);
    const answer = doc.paths['/v1/{author}/{ladder}']!.get!.responses['200']!.content!['application/json']!.schema as any;
    expect(answer.properties.config).toMatchObject(ref);
  });

  it('is OpenAPI 3 and lists the public API', () => {
    expect(doc.openapi).toMatch(/^3\./);
    for (const path of ['/v1/providers', '/v1/providers/{provider}', '/v1/validate', '/v1/{author}/{ladder}', '/v1/{author}/{ladder}/chat/completions', '/v1/providers/catalog', '/v1/admin/accounts', '/v1/admin/accounts/{username}/api-keys', '/v1/admin/api-keys/{id}', '/v1/chat/completions', '/v1/models', '/v1/models/{model}', '/healthz', '/readyz']) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(doc.components.schemas.Error).toBeDefined();
  });

  it('documents the background-run paths with every status they answer', () => {
    const codes = (path: string, method: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {}).sort();
    expect(codes('/v1/pipelines/instances', 'post')).toEqual(['202', '400', '401', '404', '409', '413', '422', '500', '503']);
    expect(codes('/v1/pipelines/instances', 'get')).toEqual(['200', '400', '401', '500', '503']);
    expect(codes('/v1/pipelines/instances/{id}', 'get')).toEqual(['200', '401', '404', '500', '503']);
    expect(codes('/v1/pipelines/instances/{id}/trace', 'get')).toEqual(['200', '401', '404', '500', '503']);
    expect(codes('/v1/pipelines/instances/{id}/cancel', 'post')).toEqual(['200', '401', '404', '409', '500', '503']);
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

  it('serves a human-readable reference at /docs, which reads /v1/openapi.json', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs' });
    const page = res.statusCode === 302 ? await t.app.inject({ method: 'GET', url: res.headers.location as string }) : res;
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('swagger');
    const initializer = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(initializer.statusCode).toBe(200);
    expect(initializer.body).toContain('"urls":[{"url":"/v1/openapi.json"');
  });

  it('sends /docs and its static files with a strict Content-Security-Policy, and forbids framing', async () => {
    for (const url of ['/docs', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js', '/docs/static/nope.js']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.headers['content-security-policy'], url).toBe(DOCS_CSP);
      expect(res.headers['x-frame-options'], url).toBe('DENY');
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
    expect(DOCS_CSP).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self' 'sha256-[\w+/]+=*'; /);
    expect(DOCS_CSP).toContain("frame-ancestors 'none'");
    expect(DOCS_CSP).not.toContain('unsafe');
  });
});

describe('the documented examples, sent as they are', () => {
  let t: TestApp;
  let fake: FakeVendor;
  let headers: Record<string, string>;
  let doc: { paths: Record<string, Record<string, Operation>> };
  const example = (path: string, method: string, status?: string) => {
    const op = doc.paths[path]![method]!;
    const media = status ? op.responses[status]!.content!['application/json']! : op.requestBody!.content['application/json']!;
    return examplesOf(media)[0]![1];
  };
  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: 'sk-docs-example-0123456789' });
    t = await build({ PROVIDER_BASE_URL_OPENAI: fake.baseUrl });
    ({ headers } = await createUser(t.app));
    const connected = await t.app.inject({ method: 'POST', url: '/v1/providers', headers, payload: { provider: 'openai', api_key: 'sk-docs-example-0123456789' } });
    expect(connected.statusCode).toBe(201);
    doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it("run as Swagger UI's Try it out sends them: the chat request answers 200", async () => {
    const body = example('/v1/chat/completions', 'post') as Record<string, unknown>;
    expect(body.stream).toBeUndefined();
    const res = await t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: body });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().object).toBe('chat.completion');
    expect(fake.requests).toHaveLength(1);
  });

  it('validate the example ladder config as valid, as the documented answer says', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/validate', headers, payload: example('/v1/validate', 'post') as object });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(example('/v1/validate', 'post', '200'));
  });
});
