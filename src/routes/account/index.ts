// GET /v1/account: who the calling API key belongs to. The web UI signs in with it, and
// prefills "save as" with the username, the author of the ladders the key can save.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { LadderAccessSchema } from '../../schemas/admin.js';
import { errorResponses, successResponse, Uuid } from '../../schemas/common.js';

const CallerSchema = Type.Object({
  id: Uuid,
  username: Type.String({ description: 'The author of the ladders this account saves' }),
  api_key: Type.Object({ id: Uuid, access: LadderAccessSchema }, { description: 'The key that made this request' }),
});

const example = {
  id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  username: 'alice',
  api_key: { id: '3f2b8c1e-5d4a-4e6f-9a7b-2c1d0e9f8a6b', access: { mode: 'unrestricted' as const, ladders: [] } },
};

const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('', {
    schema: {
      operationId: 'getAccount',
      tags: ['account'],
      summary: 'The account the API key belongs to, and the key’s ladder access',
      response: { 200: successResponse('Your account', CallerSchema, example), ...errorResponses(401) },
    },
  }, async (request) => {
    const { accountId, username, apiKeyId, access } = request.principal;
    return { id: accountId, username, api_key: { id: apiKeyId, access } };
  });
};

export default accountRoutes;
