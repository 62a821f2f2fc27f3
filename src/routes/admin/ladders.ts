// Admin routes for an account's ladders: what `ladder-admin push-ladder`, `list-ladders`,
// `show-ladder` and `delete-ladder` do, for a CLI that finds the embedded database held by
// this server. The admin acts as the account's owner, so private ladders are included.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { findAccount, ownerOf } from '../../services/accounts.js';
import { errorResponses, OkSchema, Slug, successResponse, Username, withExamples } from '../../schemas/common.js';
import { LadderListSchema, LadderMetadataSchema, LadderVersionQuerySchema, SaveLadderBodySchema } from '../../schemas/ladders.js';
import * as ex from '../../schemas/examples.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const AccountParams = Type.Object({ username: Username });
// Any text as the slug: the ladder service judges it, so a bad one gets the answer it gets from the CLI (invalid_slug, ladder_not_found).
const LadderParams = Type.Object({ username: Username, ladder: Type.String({ minLength: 1, maxLength: 200, description: Slug.description }) });

const adminLadderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const owner = async (username: string) => ownerOf(await findAccount(app.db, username));

  app.get('/accounts/:username/ladders', {
    schema: {
      operationId: 'adminListLadders', tags, security, summary: 'An account’s ladders, private ones included (without config)',
      params: AccountParams,
      response: { 200: successResponse('The account’s ladders', LadderListSchema, ex.ladderListExample), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const principal = await owner(request.params.username);
    return { data: await app.ladders.list(principal, principal.username) };
  });

  app.put('/accounts/:username/ladders/:ladder', {
    schema: {
      operationId: 'adminSaveLadder', tags, security, summary: 'Save a ladder of the account, or a new version of it',
      description: 'As `PUT /v1/{author}/{ladder}` by the account itself: 201 with version 1 when created, 200 with the next version otherwise.',
      params: LadderParams,
      body: withExamples(SaveLadderBodySchema, ex.saveLadderExample),
      response: {
        200: successResponse('A new version was saved', LadderMetadataSchema, ex.savedAgainExample),
        201: successResponse('The ladder was created (version 1)', LadderMetadataSchema, ex.ladderMetadataExample),
        ...errorResponses(400, 401, 404, 413),
      },
    },
  }, async (request, reply) => {
    const principal = await owner(request.params.username);
    const { config, description, usage_visibility, config_visibility } = request.body;
    const saved = await app.ladders.save(principal, principal.username, request.params.ladder, {
      config,
      ...(description !== undefined ? { description } : {}),
      ...(usage_visibility ? { usageVisibility: usage_visibility } : {}),
      ...(config_visibility ? { configVisibility: config_visibility } : {}),
    });
    return reply.code(saved.created ? 201 : 200).send(saved.metadata);
  });

  app.get('/accounts/:username/ladders/:ladder', {
    schema: {
      operationId: 'adminGetLadder', tags, security, summary: 'A ladder of the account with its config, at its current or an earlier version',
      params: LadderParams,
      querystring: LadderVersionQuerySchema,
      response: { 200: successResponse('The ladder’s metadata and config', LadderMetadataSchema, ex.ladderMetadataExample), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const principal = await owner(request.params.username);
    const { version } = request.query;
    return app.ladders.describe(principal, principal.username, request.params.ladder, version === undefined ? undefined : Number(version));
  });

  app.delete('/accounts/:username/ladders/:ladder', {
    schema: {
      operationId: 'adminDeleteLadder', tags, security, summary: 'Delete a ladder of the account and all its versions (its runs keep their record)',
      params: LadderParams,
      response: { 200: successResponse('The ladder and its versions are deleted', OkSchema, { ok: true }), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const principal = await owner(request.params.username);
    await app.ladders.remove(principal, principal.username, request.params.ladder);
    return { ok: true as const };
  });
};

export default adminLadderRoutes;
