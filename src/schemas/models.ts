// GET /v1/models and /v1/models/{id}, in OpenAI's shape.
import { Type, type Static } from '@sinclair/typebox';

export const ModelSchema = Type.Object({
  id: Type.String({ description: 'A name to send as `model`: plain, or `provider/model` to pick that provider alone' }),
  object: Type.Literal('model'),
  created: Type.Integer({ description: 'Unix seconds, as the vendor reports it; 0 when it does not' }),
  owned_by: Type.String({ description: 'The provider id that serves it (for a plain name: the first connection tried)' }),
});
export type Model = Static<typeof ModelSchema>;

export const ModelListSchema = Type.Object({ object: Type.Literal('list'), data: Type.Array(ModelSchema) });

export const ModelParamsSchema = Type.Object({ '*': Type.String({ description: 'The model id; may contain slashes' }) });
