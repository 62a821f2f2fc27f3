// The OpenAPI 3 document, generated from the route schemas, at /v1/openapi.json, and a
// browsable API reference at /docs. Registered before the routes so it sees all of them.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ErrorSchema } from '../schemas/common.js';

/** Wildcard routes whose path parameter may hold slashes, and the name the document gives it. */
const WILDCARDS: Record<string, string> = { '/v1/models/*': 'model' };

async function openapi(app: FastifyInstance) {
  app.addSchema(ErrorSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Ladder service API',
        version: '1.0.0',
        description:
          'OpenAI-compatible chat completions over your own provider keys with automatic fallback, and ladders: ' +
          'authored multi-step LLM workflows. Every error uses the envelope `{error: {message, type, code, param}}`.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer ldr_live_...`' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The operator’s ADMIN_TOKEN' },
        },
      },
      security: [{ apiKey: [] }],
    },
    // `/v1/models/*` reads better as `/v1/models/{model}`; the id may still contain slashes.
    transform: ({ schema, url }) => {
      const name = WILDCARDS[url];
      if (!name || !schema?.params) return { schema, url };
      const params = schema.params as { properties: Record<string, unknown>; required?: string[] };
      const { '*': wildcard, ...others } = params.properties;
      return {
        schema: { ...schema, params: { ...params, properties: { ...others, [name]: wildcard }, required: [name] } },
        url: url.replace(/\*$/, `:${name}`),
      };
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

export default fp(openapi, { name: 'openapi', fastify: '5.x' });
