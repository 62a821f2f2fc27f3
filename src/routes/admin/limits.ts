// Admin routes of issue 10: limits of accounts and API keys, and any account's usage.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import { accounts, apiKeys } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import { NO_LIMITS, type Limits } from '../../quotas/limits-store.js';
import { findAccount } from '../../services/accounts.js';
import { ADMIN_ACTOR, recordAudit } from '../../services/audit.js';
import { errorResponses, Username, Uuid, successResponse, withExamples } from '../../schemas/common.js';
import { LimitsBodySchema, LimitsSchema, UsageQuerySchema, UsageReportSchema, type LimitsBody } from '../../schemas/quotas.js';
import { usageRange, usageReport } from '../../usage/report.js';
import * as ex from '../../schemas/examples.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const Limits = successResponse('The limits in force; null: unlimited', LimitsSchema, ex.limitsExample);
const limitsOf = (body: LimitsBody): Limits => ({ ...NO_LIMITS, ...body });

const adminLimitRoutes: FastifyPluginAsyncTypebox = async (app) => {
  async function keyExists(id: string): Promise<{ id: string; username: string }> {
    const [row] = await app.db.select({ id: accounts.id, username: accounts.username }).from(apiKeys).innerJoin(accounts, eq(accounts.id, apiKeys.accountId)).where(eq(apiKeys.id, id));
    if (!row) throw notFound('api_key_not_found', `No API key has id "${id}".`);
    return row;
  }

  app.get('/accounts/:username/limits', {
    schema: {
      operationId: 'getAccountLimits', tags, security, summary: 'An account’s limits (null: unlimited)',
      params: Type.Object({ username: Username }),
      response: { 200: Limits, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => app.limitsStore.get('account', (await findAccount(app.db, request.params.username)).id));

  app.put('/accounts/:username/limits', {
    schema: {
      operationId: 'setAccountLimits', tags, security, summary: 'Set an account’s limits: rates per UTC minute, spend per UTC day and month',
      description: 'Applies at once on this node, on others within KEY_CACHE_TTL_MS. The limits hold for all of the account’s keys together.',
      params: Type.Object({ username: Username }),
      body: withExamples(LimitsBodySchema, ex.limitsBodyExample),
      response: { 200: Limits, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const account = await findAccount(app.db, request.params.username);
    const limits = await app.limitsStore.set('account', account.id, limitsOf(request.body));
    await recordAudit(app.db, ADMIN_ACTOR, { action: 'account.limits_set', account, targetId: account.id, details: { limits } });
    return limits;
  });

  app.get('/api-keys/:id/limits', {
    schema: {
      operationId: 'getApiKeyLimits', tags, security, summary: 'An API key’s limits (null: unlimited)',
      params: Type.Object({ id: Uuid }),
      response: { 200: Limits, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    await keyExists(request.params.id);
    return app.limitsStore.get('api_key', request.params.id);
  });

  app.put('/api-keys/:id/limits', {
    schema: {
      operationId: 'setApiKeyLimits', tags, security, summary: 'Set an API key’s limits; they apply on top of its account’s',
      params: Type.Object({ id: Uuid }),
      body: withExamples(LimitsBodySchema, ex.limitsBodyExample),
      response: { 200: Limits, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const account = await keyExists(request.params.id);
    const limits = await app.limitsStore.set('api_key', request.params.id, limitsOf(request.body));
    await recordAudit(app.db, ADMIN_ACTOR, { action: 'api_key.limits_set', account, targetId: request.params.id, details: { limits } });
    return limits;
  });

  app.get('/accounts/:username/usage', {
    schema: {
      operationId: 'getAccountUsage', tags, security, summary: 'An account’s usage, as GET /v1/usage answers it to the account',
      params: Type.Object({ username: Username }),
      querystring: UsageQuerySchema,
      response: { 200: successResponse('The account’s usage report', UsageReportSchema, ex.usageReportExample), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const account = await findAccount(app.db, request.params.username);
    const range = usageRange(request.query, app.quotaClock());
    await app.usageLedger.flush();
    return usageReport(app.database, account.id, range, request.query.group_by ?? 'day', request.query.then_by);
  });
};

export default adminLimitRoutes;
