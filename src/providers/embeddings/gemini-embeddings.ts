// Gemini's batchEmbedContents: one embedContent request per input. Gemini reports no token
// counts for embeddings, so usage is estimated (characters / 4), as docs/providers.md says.
import { ShapeError, isObject } from '../adapters/types.js';
import { unsupportedContent } from '../adapters/content.js';
import { estimateEmbeddingTokens, inputsOf, type EmbeddingSupport } from './types.js';

const P = 'google';

export const geminiEmbeddings: EmbeddingSupport = {
  path: (basePath, vendorModel) => `${basePath}/v1beta/models/${encodeURIComponent(vendorModel)}:batchEmbedContents`,
  body(request, vendorModel) {
    const requests = inputsOf(request).map((one) => {
      if (typeof one !== 'string') throw unsupportedContent(P, 'input', 'takes text input only, not token arrays.');
      return {
        model: `models/${vendorModel}`,
        content: { parts: [{ text: one }] },
        ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}),
      };
    });
    return { requests };
  },
  parse(body, request) {
    if (!isObject(body) || !Array.isArray(body.embeddings)) throw new ShapeError('no embeddings array');
    const expected = inputsOf(request).length;
    if (body.embeddings.length !== expected) throw new ShapeError(`${body.embeddings.length} embeddings for ${expected} inputs`);
    const vectors = body.embeddings.map((item, i) => {
      const values = isObject(item) ? item.values : undefined;
      if (!Array.isArray(values) || !values.every((x) => typeof x === 'number')) throw new ShapeError(`embeddings[${i}].values is not numbers`);
      return values as number[];
    });
    const tokens = estimateEmbeddingTokens(request);
    return { vectors, usage: { prompt_tokens: tokens, total_tokens: tokens } };
  },
};
