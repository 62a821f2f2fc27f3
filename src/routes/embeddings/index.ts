// POST /v1/embeddings: OpenAI's embeddings request, routed like a chat call (priority order,
// fallback, breaker, quotas, ledger) to the caller's connections whose vendor embeds with the model.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { clientClosedRequest } from '../../errors.js';
import { ProviderRouteError } from '../../providers/router.js';
import { EmbeddingListSchema, EmbeddingRequestSchema, type EmbeddingList } from '../../schemas/embeddings.js';
import { errorResponses, successResponse, withExamples } from '../../schemas/common.js';
import { checkModelName } from '../../schemas/model-name.js';
import { subjectOf } from '../../usage/metering.js';
import { setRoutingHeaders, setTextHeader } from '../chat/completion.js';
import { toBase64, toFloats } from './vectors.js';
import { goneWhenClosed } from '../caller-gone.js';

const requestExample = { model: 'text-embedding-3-small', input: ['The food was delicious.', 'The waiter was friendly.'] };
const answerExample: EmbeddingList = {
  object: 'list',
  data: [{ object: 'embedding', index: 0, embedding: [0.0023, -0.0093, 0.0158] }, { object: 'embedding', index: 1, embedding: [-0.0121, 0.0047, 0.0012] }],
  model: 'text-embedding-3-small',
  usage: { prompt_tokens: 10, total_tokens: 10 },
};

const embeddingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/embeddings', {
    schema: {
      operationId: 'createEmbeddings',
      tags: ['embeddings'],
      summary: 'Create embeddings with your own provider keys',
      description:
        "OpenAI's embeddings request, at most 2,048 inputs. Routed in priority order, with fallback, to your connections whose vendor " +
        'embeds with the model (OpenAI, Azure, Gemini, Mistral, Together, Fireworks, OpenRouter, custom endpoints: docs/providers.md); a vendor ' +
        'that cannot take a member (dimensions, token arrays) is skipped, and none able to serve the model is 400 unsupported_model. ' +
        '`encoding_format: base64` is answered in base64 whatever the vendor sent. Metered, limited and recorded like chat.',
      body: withExamples(EmbeddingRequestSchema, requestExample),
      response: { 200: successResponse('The embeddings, in input order', EmbeddingListSchema, answerExample), ...errorResponses(400, 401, 402, 413, 422, 429, 500, 502, 504) },
    },
  }, async (request, reply): Promise<EmbeddingList> => {
    const body = request.body;
    checkModelName(body.model);
    const gone = goneWhenClosed(reply.raw);
    try {
      const result = await app.metering.embedding(subjectOf(request.principal), reply, body, () =>
        app.embedModel(request.principal.accountId, body, gone, request.log),
      );
      setRoutingHeaders(reply, result.attempts, result.upstreamMs, result.provider);
      if (result.model) setTextHeader(reply, 'x-ladder-model', result.model);
      const encode = body.encoding_format === 'base64' ? toBase64 : toFloats;
      // JSON.stringify, not the schema's serializer, which tries each branch of `embedding` on
      // every vector: 2,048 float vectors of 1,536 took 1.5 s more that way (docs/apis.md).
      reply.type('application/json; charset=utf-8').serializer(JSON.stringify);
      return {
        object: 'list',
        data: result.vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encode(vector) })),
        model: body.model,
        usage: result.usage,
      };
    } catch (error) {
      if (error instanceof ProviderRouteError) setRoutingHeaders(reply, error.attempts, error.upstreamMs);
      if (gone.aborted) throw clientClosedRequest();
      throw error;
    }
  });
};

export default embeddingRoutes;
