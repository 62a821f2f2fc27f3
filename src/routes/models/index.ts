// GET /v1/models and GET /v1/models/{id}: what the caller's connections can serve (docs/providers.md).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { ApiError } from '../../errors.js';
import { adapters } from '../../providers/adapters/index.js';
import type { VendorModel } from '../../providers/adapters/types.js';
import { candidatesFor } from '../../providers/catalog.js';
import { servableModels, type ModelEntry } from '../../providers/model-list.js';
import type { ProviderConnection } from '../../providers/types.js';
import { errorResponses, successResponse } from '../../schemas/common.js';
import { ModelListSchema, ModelParamsSchema, ModelSchema } from '../../schemas/models.js';
import * as ex from '../../schemas/examples.js';

const tags = ['models'];

/** Each connection's vendor list; a vendor that cannot be asked right now is logged and left out. */
async function vendorLists(app: FastifyInstance, connections: ProviderConnection[], log: FastifyBaseLogger): Promise<Array<VendorModel[] | null>> {
  return Promise.all(
    connections.map((connection) =>
      app.providerRouter.listModels(connection).catch((error: unknown) => {
        log.warn({ provider: connection.provider, connectionId: connection.id, reason: error instanceof Error ? error.message : String(error) }, 'model list unavailable');
        return null;
      }),
    ),
  );
}

const modelRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/models', {
    schema: {
      operationId: 'listModels',
      tags,
      summary: 'The models your provider connections can serve',
      description:
        'Built from each vendor’s own model list (cached for a minute), filtered by the provider catalog, under the ' +
        'plain name when plain routing reaches it and as `provider/model`. Vendors without a list (Azure OpenAI ' +
        'deployments, Perplexity) are not listed; their names are still accepted.',
      response: { 200: successResponse('The models, each under every name it can be asked for', ModelListSchema, ex.modelListExample), ...errorResponses(401) },
    },
  }, async (request) => {
    const connections = await app.connections.forRouting(request.principal.accountId);
    return { object: 'list' as const, data: servableModels(connections, await vendorLists(app, connections, request.log)) };
  });

  app.get('/models/*', {
    schema: {
      operationId: 'retrieveModel',
      tags,
      summary: 'One model your provider connections can serve',
      description:
        'A listed id, or a name a connection without a model list (Azure OpenAI, Perplexity, a vendor that cannot be ' +
        'asked right now) would accept. Anything else is 404 model_not_found.',
      params: ModelParamsSchema,
      response: { 200: successResponse('The model', ModelSchema, ex.modelExample), ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const id = request.params['*'];
    const connections = await app.connections.forRouting(request.principal.accountId);
    const lists = await vendorLists(app, connections, request.log);
    const listed = servableModels(connections, lists).find((m) => m.id === id);
    if (listed) return listed;
    // Unlisted but routable where no list could tell otherwise.
    const unlisted = candidatesFor(id, connections).find((c) => !adapters[c.connection.provider]?.models || lists[connections.indexOf(c.connection)] === null);
    if (unlisted) return { id, object: 'model', created: 0, owned_by: unlisted.connection.provider } satisfies ModelEntry;
    throw new ApiError(404, 'invalid_request_error', 'model_not_found', `The model "${id}" is not served by any of your provider connections.`, 'model');
  });
};

export default modelRoutes;
