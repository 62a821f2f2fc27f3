// Examples of the Responses API for the OpenAPI document, typed by the schemas they illustrate
// and checked against them by test/plugins/openapi.test.ts.
import type { CreateResponse, InputItemList, ResponseObject } from './responses.js';

export const createResponseExample: CreateResponse = {
  model: 'gpt-4o-mini',
  instructions: 'You are a helpful assistant.',
  input: 'Say hello in one short sentence.',
  max_output_tokens: 256,
};

const message = {
  id: 'msg_6f1d2c3b4a5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e',
  type: 'message',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text: 'Hello! Nice to meet you.', annotations: [], logprobs: [] }],
};

export const responseExample: ResponseObject = {
  id: 'resp_0d6f1c2a8b3e4f5a9c7d1e2f3a4b5c6d',
  object: 'response',
  created_at: 1748770200,
  completed_at: 1748770201,
  status: 'completed',
  error: null,
  incomplete_details: null,
  instructions: 'You are a helpful assistant.',
  max_output_tokens: 256,
  metadata: {},
  model: 'gpt-4o-mini',
  output: [message],
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  service_tier: null,
  store: true,
  temperature: null,
  text: { format: { type: 'text' }, verbosity: null },
  tool_choice: 'auto',
  tools: [],
  top_p: null,
  truncation: 'disabled',
  usage: { input_tokens: 24, input_tokens_details: { cached_tokens: 0 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 33 },
  user: null,
};

export const deletedResponseExample = { id: responseExample.id, object: 'response' as const, deleted: true as const };

const inputItem = { id: 'msg_1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Say hello in one short sentence.' }] };

export const inputItemListExample: InputItemList = { object: 'list', data: [inputItem], first_id: inputItem.id, last_id: inputItem.id, has_more: false };
