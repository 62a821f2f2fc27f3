// POST /v1/validate: checks a ladder config; nothing is saved or run.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { validateConfig } from '../../ladders/language/validator.js';
import { errorResponses, successResponse, withExamples } from '../../schemas/common.js';
import { ValidateBodySchema, ValidationResultSchema } from '../../schemas/ladders.js';
import * as ex from '../../schemas/examples.js';

const validateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('', {
    schema: {
      operationId: 'validateLadderConfig',
      tags: ['ladders'],
      summary: 'Validate a ladder config without saving or running it',
      description:
        'Reports the problems found, schema problems first, each naming where it is: at most 100, then one entry ' +
        'saying how many more there were; `error_count` is the total. A config that validates can be saved and run.',
      body: withExamples(ValidateBodySchema, ex.validateExample),
      response: { 200: successResponse('The validation result, for a valid config and an invalid one alike', ValidationResultSchema, ex.validationResultExample), ...errorResponses(400, 401, 413) },
    },
  }, async (request) => {
    const result = validateConfig(request.body.config);
    return { valid: result.valid, errors: result.errors, error_count: result.errorCount };
  });
};

export default validateRoutes;
