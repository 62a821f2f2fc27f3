// OpenAI's embeddings request and answer (POST /v1/embeddings), as every vendor is asked through it.
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './common.js';

/** OpenAI's own bound on inputs per request. */
export const MAX_EMBEDDING_INPUTS = 2048;

const Text = Type.String({ minLength: 1 });
const Tokens = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 });

export const EmbeddingRequestSchema = Type.Object(
  {
    input: Type.Union([
      Text,
      Type.Array(Text, { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
      Tokens,
      Type.Array(Tokens, { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
    ], { description: `A string, an array of strings, an array of token ids, or an array of token id arrays; at most ${MAX_EMBEDDING_INPUTS} inputs, none empty` }),
    model: Type.String({ minLength: 1, maxLength: 256 }),
    encoding_format: Type.Optional(StringEnum(['float', 'base64'], { description: 'float (default): arrays of numbers; base64: little-endian float32 bytes in base64' })),
    dimensions: Type.Optional(Type.Integer({ minimum: 1, description: 'Shorter vectors, where the model and its vendor take it' })),
    user: Type.Optional(Type.String({ description: 'End-user id; sent where the vendor has one, a no-op elsewhere' })),
  },
  { additionalProperties: false, description: "OpenAI's embeddings request; any other member is 400 unknown_parameter." },
);
export type EmbeddingRequest = Static<typeof EmbeddingRequestSchema>;

export const EmbeddingListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Type.Object({
    object: Type.Literal('embedding'),
    index: Type.Integer(),
    embedding: Type.Union([Type.Array(Type.Number()), Type.String()], { description: 'Numbers, or a base64 string with encoding_format: base64' }),
  })),
  model: Type.String({ description: 'The model name as requested' }),
  usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});
export type EmbeddingList = Static<typeof EmbeddingListSchema>;
