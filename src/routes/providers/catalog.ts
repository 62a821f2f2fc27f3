import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { providerCatalog } from '../../providers/catalog.js';
import { CatalogSchema } from '../../schemas/providers.js';
import * as ex from '../../schemas/examples.js';
import { successResponse } from '../../schemas/common.js';

// Built once: the catalog is static for the life of the process.
const catalogBody = {
  data: providerCatalog.map(({ id, label, credentialKind, supportsEndpoint }) => ({ id, label, credentialKind, supportsEndpoint })),
};

const catalogRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/catalog', {
    schema: { operationId: 'getProviderCatalog', tags: ['providers'], security: [], summary: 'Supported providers (no authentication)', response: { 200: successResponse('Every provider this service can call', CatalogSchema, ex.catalogExample) } },
  }, async () => catalogBody);
};

export default catalogRoute;
