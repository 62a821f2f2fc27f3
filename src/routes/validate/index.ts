// POST /v1/validate: checks a ladder config; nothing is saved or run.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { validateConfig } from '../../ladders/validator.js';
import { errorResponses } from '../../schemas/common.js';
import { ValidateBodySchema, ValidationResultSchema } from '../../schemas/ladders.js';

const validateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('', {
    schema: {
      tags: ['ladders'],
      summary: 'Validate a ladder config without saving or running it',
      description: 'Reports every problem found, schema problems first, each naming where it is. A config that validates can be saved and run.',
      body: ValidateBodySchema,
      response: { 200: ValidationResultSchema, ...errorResponses(400, 401, 413) },
    },
  }, async (request) => {
    const result = validateConfig(request.body.config);
    return { valid: result.valid, errors: result.errors };
  });
};

export default validateRoutes;
