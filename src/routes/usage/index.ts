// GET /v1/usage: the calling account's totals from the usage ledger.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, successResponse } from '../../schemas/common.js';
import { UsageQuerySchema, UsageReportSchema } from '../../schemas/quotas.js';
import { usageRange, usageReport } from '../../usage/report.js';
import * as ex from '../../schemas/examples.js';

const usageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('', {
    schema: {
      operationId: 'getUsage',
      tags: ['usage'],
      summary: 'Your account’s usage: requests, tokens and cost, grouped by day, model, provider, API key or ladder',
      description:
        'Every model call is counted, direct or made by a ladder run, failed ones included. Calls served by this node are ' +
        'included at once; those of other nodes within USAGE_FLUSH_MS.',
      querystring: UsageQuerySchema,
      response: { 200: successResponse('Your usage report', UsageReportSchema, ex.usageReportExample), ...errorResponses(400, 401) },
    },
  }, async (request) => {
    const range = usageRange(request.query, app.quotaClock());
    // Read-your-writes on this node: what it has buffered goes to the database first.
    await app.usageLedger.flush();
    return usageReport(app.database, request.principal.accountId, range, request.query.group_by ?? 'day', request.query.then_by);
  });
};

export default usageRoutes;
