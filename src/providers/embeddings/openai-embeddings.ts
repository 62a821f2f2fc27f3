// OpenAI's embeddings wire format, for OpenAI, Azure and the compatible vendors whose API has it.
// Each takes a different part of OpenAI's request; what one does not take skips it as a candidate.
import { ShapeError, count, isObject, type Json } from '../adapters/types.js';
import { unsupportedContent, unsupportedParameter } from '../adapters/content.js';
import { estimateEmbeddingTokens, inputsOf, type EmbeddingOutput, type EmbeddingRequest, type EmbeddingSupport } from './types.js';

export interface OpenAIEmbeddingsSpec {
  /** The member that carries `dimensions` (Mistral: output_dimension); false: the vendor has none. */
  dimensions: 'dimensions' | 'output_dimension' | false;
  /** Token id arrays as input. */
  tokens: boolean;
  /** `user` sent on (else a no-op). */
  user: boolean;
  /** Takes `encoding_format: base64`: then always asked for it (a third of the bytes of floats, and exact), decoded here for floats. */
  base64: boolean;
  /** Defaults to `{base}/embeddings`. */
  path?: (basePath: string, vendorModel: string) => string;
  /** Azure names the deployment in the URL. Default true. */
  modelInBody?: boolean;
}

export function openAIEmbeddings(provider: string, spec: OpenAIEmbeddingsSpec): EmbeddingSupport {
  return {
    path: spec.path ?? ((basePath) => `${basePath}/embeddings`),
    body(request, vendorModel) {
      const inputs = inputsOf(request);
      if (!spec.tokens && inputs.some((one) => typeof one !== 'string')) throw unsupportedContent(provider, 'input', 'takes text input only, not token arrays.');
      const body: Json = { input: request.input };
      if (spec.modelInBody !== false) body.model = vendorModel;
      if (request.dimensions !== undefined) {
        if (spec.dimensions === false) throw unsupportedParameter(provider, 'dimensions');
        body[spec.dimensions] = request.dimensions;
      }
      if (spec.base64) body.encoding_format = 'base64';
      if (spec.user && request.user !== undefined) body.user = request.user;
      return body;
    },
    parse: parseEmbeddingList,
  };
}

/** `{data: [{index, embedding}], model, usage}`; the vectors put in input order. */
export function parseEmbeddingList(body: unknown, request: EmbeddingRequest): EmbeddingOutput {
  if (!isObject(body) || !Array.isArray(body.data)) throw new ShapeError('no data array');
  const expected = inputsOf(request).length;
  const vectors = new Array<number[] | string>(expected);
  for (const [position, item] of body.data.entries()) {
    if (!isObject(item)) throw new ShapeError(`data[${position}] is not an object`);
    const index = typeof item.index === 'number' ? item.index : position;
    const vector = item.embedding;
    if (!(typeof vector === 'string' || (Array.isArray(vector) && vector.every((x) => typeof x === 'number')))) throw new ShapeError(`data[${position}].embedding is neither numbers nor base64`);
    if (!Number.isInteger(index) || index < 0 || index >= expected || vectors[index] !== undefined) throw new ShapeError(`data[${position}].index is not one of the inputs`);
    vectors[index] = vector as number[] | string;
  }
  if (body.data.length !== expected) throw new ShapeError(`${body.data.length} embeddings for ${expected} inputs`);
  const usage = isObject(body.usage) ? body.usage : null;
  const prompt = usage && typeof usage.prompt_tokens === 'number' ? count(usage.prompt_tokens) : estimateEmbeddingTokens(request);
  return { vectors, usage: { prompt_tokens: prompt, total_tokens: prompt }, model: typeof body.model === 'string' ? body.model : undefined };
}
