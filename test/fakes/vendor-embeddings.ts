// The fakes' embeddings and token counting endpoints, each in its vendor's wire format.
// A text's fake vector: `dimensions` numbers (default 4), (length + i) / 64, exact in float32,
// so floats and base64 can be compared exactly. Token counts: characters of the text.
import type { RecordedRequest } from './vendors.js';

export const FAKE_DIMENSIONS = 4;

/** The vector every fake answers for `text` (token arrays: their length stands for the text's). */
export const fakeVector = (text: string | number[], dimensions = FAKE_DIMENSIONS): number[] =>
  Array.from({ length: dimensions }, (_, i) => (text.length + i) / 64);

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

const inputs = (input: unknown): Array<string | number[]> =>
  typeof input === 'string' ? [input] : Array.isArray(input) && typeof input[0] === 'number' ? [input as number[]] : (input as Array<string | number[]>);

const base64 = (vector: number[]) => Buffer.from(new Float32Array(vector).buffer).toString('base64');

type Problem = { status: number; message: string; detail?: string } | null;

/** OpenAI's (and Azure's) POST …/embeddings; `modelInBody`: false for Azure, whose deployment is in the path. */
export function checkOpenAIEmbeddings(body: any, modelInBody: boolean): Problem {
  if (!isObj(body)) return { status: 400, message: 'We could not parse the JSON body of your request.' };
  if (modelInBody && typeof body.model !== 'string') return { status: 400, message: 'you must provide a model parameter' };
  const list = body.input === undefined ? [] : inputs(body.input);
  if (list.length === 0 || list.some((one) => one.length === 0)) return { status: 400, message: "'$.input' is invalid. Please check the API reference." };
  const known = new Set(['input', 'model', 'encoding_format', 'dimensions', 'user']);
  for (const key of Object.keys(body)) if (!known.has(key)) return { status: 400, message: `Unrecognized request argument supplied: ${key}` };
  return null;
}

export function openAIEmbeddingList(body: any, model: string) {
  const list = inputs(body.input);
  const tokens = list.reduce((sum, one) => sum + one.length, 0);
  return {
    object: 'list',
    data: list.map((one, index) => {
      const vector = fakeVector(one, body.dimensions);
      return { object: 'embedding', index, embedding: body.encoding_format === 'base64' ? base64(vector) : vector };
    }),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

/** Gemini's POST /v1beta/models/{model}:batchEmbedContents. */
export function checkGeminiBatch(req: RecordedRequest): Problem {
  const model = decodeURIComponent(req.path.slice('/v1beta/models/'.length, req.path.lastIndexOf(':')));
  const body = req.body;
  if (!isObj(body) || !Array.isArray(body.requests) || body.requests.length === 0) return { status: 400, message: '* BatchEmbedContentsRequest.requests: requests is not specified' };
  for (const [i, r] of (body.requests as any[]).entries()) {
    if (r.model !== `models/${model}`) return { status: 400, message: `* BatchEmbedContentsRequest.requests[${i}].model: model must match the batch model` };
    if (!isObj(r.content) || !Array.isArray(r.content.parts) || !r.content.parts.every((p: any) => typeof p.text === 'string')) {
      return { status: 400, message: `* BatchEmbedContentsRequest.requests[${i}].content: content is not specified` };
    }
  }
  return null;
}

export function geminiEmbeddings(req: RecordedRequest) {
  return {
    embeddings: (req.body.requests as any[]).map((r) => ({ values: fakeVector(r.content.parts.map((p: any) => p.text).join(''), r.outputDimensionality) })),
  };
}

/** Anthropic's POST /v1/messages/count_tokens takes these members only. */
const COUNT_MEMBERS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config', 'cache_control', 'speed', 'mcp_servers']);

export function checkAnthropicCount(body: any): Problem {
  if (!isObj(body)) return { status: 400, message: 'Request body must be JSON' };
  if (typeof body.model !== 'string') return { status: 400, message: 'model: Field required' };
  if (!Array.isArray(body.messages) || body.messages.length === 0) return { status: 400, message: 'messages: at least one message is required' };
  for (const key of Object.keys(body)) if (!COUNT_MEMBERS.has(key)) return { status: 400, message: `${key}: Extra inputs are not permitted` };
  return null;
}

/** Input tokens: the characters of every text (system, messages, tool names). */
export function anthropicCount(body: any) {
  let chars = typeof body.system === 'string' ? body.system.length : 0;
  for (const m of body.messages as any[]) {
    if (typeof m.content === 'string') chars += m.content.length;
    else for (const b of m.content) if (typeof b.text === 'string') chars += b.text.length;
  }
  for (const t of body.tools ?? []) chars += String(t.name).length;
  return { input_tokens: chars };
}
