// GET /v1/admin/audit: every administrative change, newest first (docs/accounts.md).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AuditListSchema, AuditQuerySchema } from '../../schemas/accounts.js';
import { errorResponses, successResponse } from '../../schemas/common.js';
import { listAudit } from '../../services/audit.js';
import { decodeCursor, encodeCursor, parseLimit } from './paging.js';
import * as ex from '../../schemas/account-examples.js';

const ID_RE = /^[1-9]\d{0,15}$/;

const adminAuditRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/audit', {
    schema: {
      operationId: 'listAuditLog', tags: ['admin'], security: [{ adminToken: [] }],
      summary: 'The audit log: who changed what, when; newest first',
      description:
        'Every change made through the admin API, the command line, or an account’s `manage` keys. Kept AUDIT_RETENTION_DAYS. ' +
        'Cursor pagination: pass `next_cursor` as `after` while `has_more` is true.',
      querystring: AuditQuerySchema,
      response: { 200: successResponse('A page of the audit log', AuditListSchema, ex.auditListExample), ...errorResponses(400, 401) },
    },
  }, async (request) => {
    const { account, action, limit, after } = request.query;
    const page = await listAudit(app.db, {
      limit: parseLimit(limit),
      ...(account ? { username: account } : {}),
      ...(action ? { action } : {}),
      ...(after !== undefined ? { before: Number(decodeCursor(after, ID_RE)) } : {}),
    });
    const last = page.entries.at(-1);
    return { object: 'list' as const, data: page.entries, has_more: page.hasMore, next_cursor: page.hasMore && last ? encodeCursor(last.id) : null };
  });
};

export default adminAuditRoutes;
