// GET /v1/account: the caller's account, its limits, this month's usage, and the key calling.
// Any key may read it (a `use` key learns its scope here, so a client knows what it may do).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MyAccountSchema } from '../../schemas/accounts.js';
import { errorResponses, successResponse } from '../../schemas/common.js';
import { findAccount } from '../../services/accounts.js';
import { monthUsage } from '../../services/account-overview.js';
import { getApiKey } from '../../services/api-keys.js';
import * as ex from '../../schemas/account-examples.js';

const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('', {
    schema: {
      operationId: 'getOwnAccount',
      tags: ['account'],
      summary: 'Your account: its limits, this month’s usage and spend, and the key you called with',
      response: { 200: successResponse('Your account', MyAccountSchema, ex.myAccountExample), ...errorResponses(401) },
    },
  }, async (request) => {
    const { accountId, apiKeyId, username } = request.principal;
    await app.usageLedger.flush(); // read-your-writes on this node
    const [account, key, limits] = await Promise.all([
      findAccount(app.db, username),
      getApiKey(app.db, accountId, apiKeyId),
      app.limitsStore.forSubject(accountId, apiKeyId),
    ]);
    const { revoked_at: _, ...calling } = key;
    return {
      id: account.id,
      username: account.username,
      created_at: account.createdAt.toISOString(),
      limits: { account: limits.account, key: limits.key },
      this_month: await monthUsage(app.database, accountId, app.quotaClock()),
      key: calling,
    };
  });
};

export default accountRoutes;
