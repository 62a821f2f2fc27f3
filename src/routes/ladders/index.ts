// Ladder authoring and metadata: list an author's ladders, save, read and delete one.
// Who may see what, and the single 404 for hidden ladders: docs/ladders-api.md.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, OkSchema, successResponse, withExamples } from '../../schemas/common.js';
import {
  AuthorParamsSchema,
  LadderListSchema,
  LadderMetadataSchema,
  LadderParamsSchema,
  LadderVersionQuerySchema,
  SaveLadderBodySchema,
} from '../../schemas/ladders.js';
import { rethrowUnlessParams } from './params.js';
import * as ex from '../../schemas/examples.js';

const tags = ['ladders'];

const ladderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ladders = app.ladders;

  app.get('/:author', {
    attachValidation: true,
    schema: {
      operationId: 'listLadders',
      tags,
      summary: "List an author's public ladders (all of them for the author)",
      description: 'Without config. Ladders the API key may not access are left out; an unknown author has an empty list.',
      params: AuthorParamsSchema,
      response: { 200: successResponse('The author’s ladders you may see, without config', LadderListSchema, ex.ladderListExample), ...errorResponses(401) },
    },
  }, async (request) => {
    rethrowUnlessParams(request);
    return { data: await ladders.list(request.principal, request.params.author) };
  });

  app.put('/:author/:ladder', {
    attachValidation: true,
    schema: {
      operationId: 'saveLadder',
      tags,
      summary: 'Create a ladder, or save a new version of it (owner only)',
      description:
        'Answers 201 with version 1 when created, 200 with the next version otherwise. Omitted description and ' +
        'visibilities keep their saved values (new ladders: private). An invalid config is 400 invalid_ladder_config.',
      params: LadderParamsSchema,
      body: withExamples(SaveLadderBodySchema, ex.saveLadderExample),
      response: {
        200: successResponse('A new version was saved', LadderMetadataSchema, ex.savedAgainExample),
        201: successResponse('The ladder was created (version 1)', LadderMetadataSchema, ex.ladderMetadataExample),
        ...errorResponses(400, 401, 403, 404, 413) },
    },
  }, async (request, reply) => {
    rethrowUnlessParams(request);
    const { author, ladder } = request.params;
    const { config, description, usage_visibility, config_visibility } = request.body;
    const saved = await ladders.save(request.principal, author, ladder, {
      config,
      ...(description !== undefined ? { description } : {}),
      ...(usage_visibility ? { usageVisibility: usage_visibility } : {}),
      ...(config_visibility ? { configVisibility: config_visibility } : {}),
    });
    return reply.code(saved.created ? 201 : 200).send(saved.metadata);
  });

  app.get('/:author/:ladder', {
    attachValidation: true,
    schema: {
      operationId: 'getLadder',
      tags,
      summary: "A ladder's metadata",
      description:
        '`config` and `allowed_targets` only when you own the ladder or its config_visibility is public. ' +
        '`?version=N` describes an earlier saved version (404 ladder_version_not_found if there is none).',
      params: LadderParamsSchema,
      querystring: LadderVersionQuerySchema,
      response: { 200: successResponse('The ladder’s metadata', LadderMetadataSchema, ex.ladderMetadataExample), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    rethrowUnlessParams(request);
    const { version } = request.query;
    return ladders.describe(request.principal, request.params.author, request.params.ladder, version === undefined ? undefined : Number(version));
  });

  app.delete('/:author/:ladder', {
    attachValidation: true,
    schema: {
      operationId: 'deleteLadder',
      tags,
      summary: 'Delete a ladder and all its versions (owner only)',
      description: 'Its instances are kept.',
      params: LadderParamsSchema,
      response: { 200: successResponse('The ladder and its versions are deleted', OkSchema, { ok: true }), ...errorResponses(401, 403, 404) },
    },
  }, async (request) => {
    rethrowUnlessParams(request);
    await ladders.remove(request.principal, request.params.author, request.params.ladder);
    return { ok: true as const };
  });
};

export default ladderRoutes;
