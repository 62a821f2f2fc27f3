// POST /v1/responses (OpenAI's Responses API) and the stored responses. A response is routed as
// a chat completion (src/responses/to-chat.ts), so every vendor serves it through the one router.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { clientClosedRequest, invalidRequest, missingField, notFound } from '../../errors.js';
import { ProviderRouteError } from '../../providers/router.js';
import { finishedResponse, outputItems, type ResponseMeta } from '../../responses/from-chat.js';
import { newResponseId } from '../../responses/ids.js';
import { normalizeInput, type Item } from '../../responses/input.js';
import { createResponseStore } from '../../responses/store.js';
import { toChatRequest } from '../../responses/to-chat.js';
import { errorResponses, successResponse, withExamples } from '../../schemas/common.js';
import * as ex from '../../schemas/responses-examples.js';
import { checkModelName } from '../../schemas/model-name.js';
import {
  CreateResponseSchema,
  DeletedResponseSchema,
  InputItemListSchema,
  InputItemsQuerySchema,
  ResponseIdParamsSchema,
  ResponseObjectSchema,
  type InputItemList,
  type ResponseObject,
} from '../../schemas/responses.js';
import { subjectOf } from '../../usage/metering.js';
import { setRoutingHeaders, setTextHeader, textChoice } from '../chat/completion.js';
import { streamResponse } from './stream.js';
import { goneWhenClosed } from '../caller-gone.js';

/** OpenAI's answer for an id that is unknown, malformed, deleted or another account's. */
const responseNotFound = (id: string) => notFound('response_not_found', `Response with id '${id}' not found.`);

const responseRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const store = createResponseStore(app.db, app.database);

  app.post('/', {
    schema: {
      operationId: 'createResponse',
      tags: ['responses'],
      summary: "Create a model response (OpenAI's Responses API) with your own provider keys",
      description:
        'Routed like a chat completion: priority order, fallback, quotas and the usage ledger, to any vendor (docs/responses.md). ' +
        'Function tools only; a built-in tool (web_search, file_search, ...) is 400 unsupported_parameter. Stored unless `store: false`, ' +
        'for GET, input_items and `previous_response_id`, which continues a conversation on any vendor. With `stream: true` the 200 ' +
        'answer is `text/event-stream` Responses events, ending with response.completed (or response.incomplete / response.failed).',
      produces: ['application/json', 'text/event-stream'],
      body: withExamples(CreateResponseSchema, ex.createResponseExample),
      response: { 200: successResponse('The response', ResponseObjectSchema, ex.responseExample), ...errorResponses(400, 401, 402, 404, 413, 422, 429, 500, 502, 504) },
    },
  }, async (request, reply) => {
    const body = request.body;
    const { accountId } = request.principal;
    checkModelName(body.model);
    if (body.input === undefined) throw missingField('input');
    const input = normalizeInput(body.input);
    let context: Item[] = [];
    let previousUuid: string | null = null;
    if (body.previous_response_id) {
      const found = await store.conversation(accountId, body.previous_response_id);
      if (!found) throw notFound('previous_response_not_found', `Previous response with id '${body.previous_response_id}' not found.`);
      context = found.items;
      previousUuid = found.uuid;
    }
    const chatRequest = toChatRequest(body, context, input);
    const { id, uuid } = newResponseId();
    const meta: ResponseMeta = { id, createdAt: Math.floor(Date.now() / 1000), body };
    const save = (response: ResponseObject) =>
      body.store === false ? Promise.resolve() : store.save(accountId, uuid, previousUuid, input, response as unknown as Record<string, unknown>);
    const subject = subjectOf(request.principal);
    if (body.stream === true) return streamResponse(app, reply, { subject, meta, chatRequest, save, log: request.log });

    const gone = goneWhenClosed(reply.raw);
    try {
      const result = await app.metering.direct(subject, reply, chatRequest, (sent) => app.callModel(accountId, sent, gone, request.log));
      setRoutingHeaders(reply, result.attempts, result.upstreamMs, result.provider);
      if (result.model) setTextHeader(reply, 'x-ladder-model', result.model);
      const choice = result.choices?.[0] ?? textChoice(result.content, result.finishReason);
      const response = finishedResponse(meta, outputItems(choice), choice.finish_reason, result.usage, Math.floor(Date.now() / 1000));
      await save(response);
      return response;
    } catch (error) {
      if (error instanceof ProviderRouteError) setRoutingHeaders(reply, error.attempts, error.upstreamMs);
      if (gone.aborted) throw clientClosedRequest();
      throw error;
    }
  });

  app.get('/:id', {
    schema: {
      operationId: 'getResponse',
      tags: ['responses'],
      summary: 'A stored response',
      params: ResponseIdParamsSchema,
      response: { 200: successResponse('The response as it was answered', ResponseObjectSchema, ex.responseExample), ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const found = await store.get(request.principal.accountId, request.params.id);
    if (!found) throw responseNotFound(request.params.id);
    return found.body as unknown as ResponseObject;
  });

  app.delete('/:id', {
    schema: {
      operationId: 'deleteResponse',
      tags: ['responses'],
      summary: 'Delete a stored response',
      description: 'A response that continued this one keeps its own items; a conversation through it loses this turn.',
      params: ResponseIdParamsSchema,
      response: { 200: successResponse('Deleted', DeletedResponseSchema, ex.deletedResponseExample), ...errorResponses(401, 404) },
    },
  }, async (request) => {
    if (!(await store.delete(request.principal.accountId, request.params.id))) throw responseNotFound(request.params.id);
    return { id: request.params.id, object: 'response' as const, deleted: true as const };
  });

  app.get('/:id/input_items', {
    schema: {
      operationId: 'listResponseInputItems',
      tags: ['responses'],
      summary: "A stored response's input items",
      description: 'OpenAI\'s list: `order` desc (default) or asc, `limit` 1 to 100 (default 20), `after` an item id; page on while `has_more`.',
      params: ResponseIdParamsSchema,
      querystring: InputItemsQuerySchema,
      response: { 200: successResponse('A page of input items', InputItemListSchema, ex.inputItemListExample), ...errorResponses(400, 401, 404) },
    },
  }, async (request): Promise<InputItemList> => {
    const { id } = request.params;
    const found = await store.get(request.principal.accountId, id);
    if (!found) throw responseNotFound(id);
    const { limit, order, after } = request.query;
    const items = order === 'asc' ? found.inputItems : [...found.inputItems].reverse();
    let start = 0;
    if (after !== undefined) {
      const at = items.findIndex((item) => item.id === after);
      if (at < 0) throw invalidRequest('invalid_value', `after: no input item of ${id} has the id '${after}'.`, 'after');
      start = at + 1;
    }
    const page = items.slice(start, start + parseLimit(limit));
    return { object: 'list', data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: start + page.length < items.length };
  });
};

function parseLimit(value: string | undefined): number {
  if (value === undefined) return 20;
  const limit = /^\d{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= 100)) throw invalidRequest('invalid_value', 'limit must be an integer from 1 to 100.', 'limit');
  return limit;
}

export default responseRoutes;
