// The OpenAPI 3 document, generated from the route schemas, at /v1/openapi.json, and a
// browsable API reference at /docs that reads it. Registered before the routes so it sees
// all of them. `npm run lint:openapi` lints the document (README).
import { createHash } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ErrorSchema } from '../schemas/common.js';
import { AnthropicErrorSchema } from '../schemas/messages.js';
import { LADDER_CONFIG, LadderConfigSchema } from '../schemas/ladder-config.js';

export const OPENAPI_PATH = '/v1/openapi.json';

// Swagger UI's page has no inline script: its bundle, styles and the initializer all come from
// /docs/static, and "Try it out" calls this origin. Its one inline style is the <style> element
// of the logo's SVG, allowed by its hash (the browser test fails if the bundle changes it). The
// page may not be framed (clickjacking of a page that holds an API key once authorized).
const LOGO_STYLE = '.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}';
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' 'sha256-${createHash('sha256').update(LOGO_STYLE).digest('base64')}'`,
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TAGS = [
  { name: 'chat', description: 'OpenAI-compatible chat completions over your own provider keys, with fallback' },
  { name: 'embeddings', description: 'OpenAI-compatible embeddings over your own provider keys, with fallback' },
  { name: 'messages', description: 'Anthropic-compatible Messages API over your own provider keys, any vendor, with fallback' },
  { name: 'models', description: 'The models your provider connections can serve' },
  { name: 'providers', description: 'Your provider connections (bring your own key) and the provider catalog' },
  { name: 'ladders', description: 'Authoring, validating and running ladders: multi-step LLM workflows' },
  { name: 'pipelines', description: 'Background ladder runs and the instance record of every run' },
  { name: 'webhooks', description: 'Endpoints told when your runs end: signed, retried, with a delivery log' },
  { name: 'usage', description: 'Requests, tokens and cost from the usage ledger' },
  { name: 'account', description: 'Your account: its limits and this month’s usage' },
  { name: 'api-keys', description: 'Your account’s API keys; needs a key with the `manage` scope' },
  { name: 'admin', description: 'Accounts, API keys, limits, and every account’s ladders, runs and connections; needs the operator’s ADMIN_TOKEN' },
  { name: 'health', description: 'Liveness and readiness probes' },
];

/** Wildcard routes whose path parameter may hold slashes, and the name the document gives it. */
const WILDCARDS: Record<string, string> = { '/v1/models/*': 'model' };

/**
 * A copy of a route schema in which every member marked as a ladder config shows the language's
 * schema; the route's own schema, which accepts any config for the validator to judge, is kept.
 */
function showLadderConfigs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(showLadderConfigs);
  if (!schema || typeof schema !== 'object') return schema;
  const node = schema as Record<string, unknown>;
  if (node.title === LADDER_CONFIG) {
    return { ...(node.description ? { description: node.description } : {}), allOf: [{ $ref: LADDER_CONFIG }] };
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, showLadderConfigs(value)]));
}

async function openapi(app: FastifyInstance) {
  app.addSchema(ErrorSchema);
  app.addSchema(AnthropicErrorSchema); // the /v1/messages routes' errors (docs/apis.md)
  app.addSchema(LadderConfigSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Ladder service API',
        version: '1.0.0',
        description:
          'OpenAI-compatible chat completions over your own provider keys with automatic fallback, and ladders: ' +
          'authored multi-step LLM workflows. Every error uses the envelope `{error: {message, type, code, param}}`. ' +
          'Request bodies are JSON, uncompressed: a `Content-Encoding` other than `identity` is answered 415 `unsupported_content_encoding`.',
        license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
      },
      servers: [{ url: '/', description: 'This server' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer ldr_live_...`' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The operator’s ADMIN_TOKEN' },
        },
      },
      security: [{ apiKey: [] }],
    },
    transform: ({ schema, url }) => {
      if (!schema) return { schema, url };
      const withConfigs = {
        ...schema,
        ...(schema.body ? { body: showLadderConfigs(schema.body) } : {}),
        ...(schema.response ? { response: showLadderConfigs(schema.response) } : {}),
      };
      // `/v1/models/*` reads better as `/v1/models/{model}`; the id may still contain slashes.
      const name = WILDCARDS[url];
      if (!name || !schema.params) return { schema: withConfigs, url };
      const params = schema.params as { properties: Record<string, unknown>; required?: string[] };
      const { '*': wildcard, ...others } = params.properties;
      return {
        schema: { ...withConfigs, params: { ...params, properties: { ...others, [name]: wildcard }, required: [name] } },
        url: url.replace(/\*$/, `:${name}`),
      };
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  // In a context of its own, so that these headers cover every /docs answer, static files included.
  await app.register(async (docs) => {
    docs.addHook('onRequest', async (_request, reply) => {
      reply
        .header('content-security-policy', DOCS_CSP)
        .header('x-frame-options', 'DENY')
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer');
    });
    // The plugin points the page at its own /docs/json; a `urls` list takes precedence in Swagger UI,
    // so the page reads the document where the README says it is.
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { docExpansion: 'list', deepLinking: true, urls: [{ url: OPENAPI_PATH, name: 'Ladder service API' }] },
    });
  });

  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}

export default fp(openapi, { name: 'openapi', fastify: '5.x' });
