// The operator's view of accounts: a cursor list filtered by name, an account's detail, and
// disabling or enabling it (docs/accounts.md).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AccountDetailSchema, AccountListQuerySchema, AccountListSchema, AccountStatusSchema } from '../../schemas/accounts.js';
import { errorResponses, successResponse, Username, USERNAME_PATTERN } from '../../schemas/common.js';
import { accountDetail, listAccounts } from '../../services/account-overview.js';
import { setAccountDisabled } from '../../services/account-status.js';
import { ADMIN_ACTOR } from '../../services/audit.js';
import { decodeCursor, encodeCursor, parseLimit } from './paging.js';
import * as ex from '../../schemas/account-examples.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const USERNAME_RE = new RegExp(USERNAME_PATTERN);

const adminAccountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/accounts', {
    schema: {
      operationId: 'listAccounts', tags, security, summary: 'Every account, by username',
      description: 'Cursor pagination: pass `next_cursor` as `after` while `has_more` is true. `name` keeps usernames containing it.',
      querystring: AccountListQuerySchema,
      response: { 200: successResponse('A page of accounts', AccountListSchema, ex.accountListExample), ...errorResponses(400, 401) },
    },
  }, async (request) => {
    const { name, limit, after } = request.query;
    const page = await listAccounts(app.db, {
      limit: parseLimit(limit),
      ...(name ? { name } : {}),
      ...(after !== undefined ? { after: decodeCursor(after, USERNAME_RE) } : {}),
    });
    const last = page.accounts.at(-1);
    return { object: 'list' as const, data: page.accounts, has_more: page.hasMore, next_cursor: page.hasMore && last ? encodeCursor(last.username) : null };
  });

  app.get('/accounts/:username', {
    schema: {
      operationId: 'getAccount', tags, security, summary: 'An account: keys count, limits, this month’s usage, whether it is disabled',
      params: Type.Object({ username: Username }),
      response: { 200: successResponse('The account', AccountDetailSchema, ex.accountDetailExample), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    await app.usageLedger.flush(); // this node's buffered calls count too
    return accountDetail(app.database, request.params.username, app.quotaClock());
  });

  for (const disabled of [true, false]) {
    const verb = disabled ? 'disable' : 'enable';
    app.post(`/accounts/:username/${verb}`, {
      schema: {
        operationId: `${verb}Account`, tags, security,
        summary: disabled
          ? 'Disable an account: its keys answer 401 account_disabled on every node at once, its runs in flight are cancelled'
          : 'Enable a disabled account: its keys work again',
        description: 'Idempotent: doing it twice is the same as once (and audited once).',
        params: Type.Object({ username: Username }),
        response: { 200: successResponse('The account after the change', AccountStatusSchema, disabled ? ex.disabledAccountExample : ex.enabledAccountExample), ...errorResponses(400, 401, 404) },
      },
    }, async (request) => {
      const change = await setAccountDisabled(app.database, request.params.username, disabled, ADMIN_ACTOR);
      for (let i = 0; i < change.pendingCancelled; i++) app.metrics.runFinished('async', 'cancelled'); // metrics: queued runs ended
      const { limits: _limits, this_month: _month, ...account } = await accountDetail(app.database, request.params.username, app.quotaClock());
      return { ...account, runs_cancelled: change.pendingCancelled + change.runningCancelled };
    });
  }
};

export default adminAccountRoutes;
