// Reading background and synchronous runs alike: one instance, its trace, and the account's
// instances page by page. Only the owner account sees an instance, and only through keys that
// may see its ladder; for anyone else it does not exist (docs/pipelines.md).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { invalidCursor, invalidRequest } from '../../errors.js';
import { errorResponses, successResponse } from '../../schemas/common.js';
import {
  InstanceListQuerySchema, InstanceListSchema, InstanceParamsSchema, InstanceSchema, InstanceTraceSchema, type InstanceList,
} from '../../schemas/pipelines.js';
import type { ListPosition } from '../../services/instance-reads.js';
import { accessibleInstance } from './instance-access.js';
import { instanceListItem, instanceView, isUnderway, traceView } from './views.js';
import * as ex from '../../schemas/examples.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const POSITION_RE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6})_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export const encodeCursor = (p: ListPosition) => Buffer.from(`${p.createdAt}_${p.id}`).toString('base64url');

/** The position a cursor of ours names; 400 invalid_cursor for anything else. */
export function decodeCursor(cursor: string): ListPosition {
  const match = POSITION_RE.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  const position = match ? { createdAt: match[1]!, id: match[2]! } : null;
  // Re-encoding must give the cursor back, and the time must be a real one (no 30 February, no
  // second 60) in a year the database takes (it has no year 0).
  const millis = position?.createdAt.slice(0, 23) ?? '';
  const time = new Date(`${millis}Z`);
  if (!position || encodeCursor(position) !== cursor || Number.isNaN(time.getTime()) || time.toISOString().slice(0, 23) !== millis || millis.startsWith('0000')) {
    throw invalidCursor();
  }
  return position;
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = /^\d{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) {
    throw invalidRequest('invalid_value', `limit must be an integer from 1 to ${MAX_LIMIT}.`, 'limit');
  }
  return limit;
}

const readRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/instances/:id', {
    schema: {
      operationId: 'getInstance',
      tags: ['pipelines'],
      summary: 'An instance: status, progress, usage, and its result or error',
      description: 'Poll this until `status` is `completed`, `failed` or `cancelled`. Synchronous runs are instances too.',
      params: InstanceParamsSchema,
      response: { 200: successResponse('The instance', InstanceSchema, ex.instanceExample), ...errorResponses(401, 404, 500) },
    },
  }, async (request) => {
    const row = await accessibleInstance(app.instances, request.principal, request.params.id);
    const soFar = isUnderway(row) ? (await app.instances.callTotals([row.id])).get(row.id) : undefined;
    return instanceView(row, soFar);
  });

  app.get('/instances/:id/trace', {
    schema: {
      operationId: 'getInstanceTrace',
      tags: ['pipelines'],
      summary: 'What each step and node of a run did',
      description:
        'For a finished run, its recorded trace. While it is pending or running, the steps its worker has reported so far ' +
        '(`partial: true`); prompts and outputs there are excerpts.',
      params: InstanceParamsSchema,
      response: { 200: successResponse('The trace, by step execution', InstanceTraceSchema, ex.instanceTraceExample), ...errorResponses(401, 404, 500) },
    },
  }, async (request) => {
    const row = await accessibleInstance(app.instances, request.principal, request.params.id);
    const events = row.status === 'running' ? await app.instances.traceEvents(row.id) : [];
    return traceView(row, events);
  });

  app.get('/instances', {
    schema: {
      operationId: 'listInstances',
      tags: ['pipelines'],
      summary: "The account's instances, newest first",
      description: 'Cursor pagination: pass `next_cursor` as `after` while `has_more` is true. Items omit `result`.',
      querystring: InstanceListQuerySchema,
      response: { 200: successResponse('A page of instances, newest first', InstanceListSchema, ex.instanceListExample), ...errorResponses(400, 401, 500) },
    },
  }, async (request): Promise<InstanceList> => {
    const { status, author, template, limit, after } = request.query;
    const { rows, hasMore } = await app.instances.list(request.principal.accountId, {
      limit: parseLimit(limit),
      access: request.principal.access,
      ...(status ? { status } : {}),
      ...(author !== undefined ? { author } : {}),
      ...(template !== undefined ? { slug: template } : {}),
      ...(after !== undefined ? { after: decodeCursor(after) } : {}),
    });
    const totals = await app.instances.callTotals(rows.filter(isUnderway).map((r) => r.id));
    const last = rows.at(-1);
    return {
      object: 'list',
      data: rows.map((row) => instanceListItem(row, totals.get(row.id))),
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeCursor(last.position) : null,
    };
  });
};

export default readRoutes;
