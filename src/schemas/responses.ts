// OpenAI's Responses API (POST /v1/responses and the stored responses): the request members
// clients use, and the response, item and list shapes. Items and tools are one loose object
// each, checked by kind in src/responses/input.ts, so a mistake is named precisely instead of
// drowning in a failed union (as for chat messages).
import { Type, type Static } from '@sinclair/typebox';
import { orNull } from './chat-messages.js';
import { StringEnum } from './common.js';

const Loose = (description: string) => Type.Object({}, { additionalProperties: true, description });

const Metadata = Type.Object(
  {},
  { patternProperties: { '^.{1,64}$': Type.String({ maxLength: 512 }) }, additionalProperties: false, maxProperties: 16, description: 'Up to 16 string pairs, stored with the response' },
);

export const InputPartSchema = Type.Object(
  {
    type: StringEnum(['input_text', 'input_image', 'input_file', 'output_text', 'refusal']),
    text: Type.Optional(Type.String()),
    image_url: Type.Optional(orNull(Type.String({ description: 'An https URL or a data: URL' }))),
    detail: Type.Optional(StringEnum(['auto', 'low', 'high', 'original'])),
    file_id: Type.Optional(orNull(Type.String())),
    file_data: Type.Optional(Type.String({ description: 'A base64 data URL' })),
    filename: Type.Optional(Type.String()),
    refusal: Type.Optional(Type.String()),
    annotations: Type.Optional(Type.Array(Type.Unknown())),
    logprobs: Type.Optional(Type.Array(Type.Unknown())),
  },
  { additionalProperties: false, description: 'input_text {text}, input_image {image_url, detail?}, input_file {file_data, filename?}; in assistant messages output_text {text} or refusal {refusal}' },
);

export const InputItemSchema = Type.Object(
  {
    type: Type.Optional(StringEnum(['message', 'function_call', 'function_call_output', 'reasoning', 'item_reference'])),
    id: Type.Optional(orNull(Type.String({ maxLength: 256 }))),
    status: Type.Optional(orNull(StringEnum(['in_progress', 'completed', 'incomplete']))),
    role: Type.Optional(StringEnum(['user', 'assistant', 'system', 'developer'])),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(InputPartSchema, { maxItems: 1000 })])),
    phase: Type.Optional(orNull(Type.String())),
    call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    name: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$' })),
    arguments: Type.Optional(Type.String()),
    output: Type.Optional(Type.Union([Type.String(), Type.Array(InputPartSchema, { maxItems: 1000 })])),
    summary: Type.Optional(Type.Array(Type.Unknown())),
    encrypted_content: Type.Optional(orNull(Type.String())),
  },
  {
    additionalProperties: false,
    description: 'a message {role, content}, a function_call {call_id, name, arguments}, a function_call_output {call_id, output}, or a reasoning item (accepted, not sent on)',
  },
);
export type InputItem = Static<typeof InputItemSchema>;
export type InputPart = Static<typeof InputPartSchema>;

export const ResponseToolSchema = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 64 }),
    name: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$' })),
    description: Type.Optional(orNull(Type.String())),
    parameters: Type.Optional(orNull(Type.Object({}, { additionalProperties: true }))),
    strict: Type.Optional(orNull(Type.Boolean())),
  },
  { additionalProperties: true, description: 'a function tool {type: "function", name, parameters?, strict?, description?}; built-in tools (web_search, file_search, ...) are refused' },
);
export type ResponseTool = Static<typeof ResponseToolSchema>;

export const ResponseToolChoiceSchema = Type.Union(
  [
    StringEnum(['none', 'auto', 'required']),
    Type.Object({ type: Type.String({ minLength: 1, maxLength: 64 }), name: Type.Optional(Type.String()), mode: Type.Optional(StringEnum(['auto', 'required'])), tools: Type.Optional(Type.Array(Loose('a tool'))) }, { additionalProperties: false }),
  ],
  { description: '"none", "auto", "required", {type: "function", name} or {type: "allowed_tools", mode, tools}' },
);

export const TextFormatSchema = Type.Object(
  {
    type: StringEnum(['text', 'json_object', 'json_schema']),
    name: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$' })),
    schema: Type.Optional(Type.Object({}, { additionalProperties: true })),
    description: Type.Optional(Type.String()),
    strict: Type.Optional(orNull(Type.Boolean())),
  },
  { additionalProperties: false, description: '{type: "text"}, {type: "json_object"} or {type: "json_schema", name, schema, strict?}' },
);

const Effort = StringEnum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

export const CreateResponseSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Optional(Type.Union([Type.String(), Type.Array(InputItemSchema, { maxItems: 10_000 })], { description: 'a string (one user message) or an array of input items' })),
    instructions: Type.Optional(orNull(Type.String())),
    tools: Type.Optional(Type.Array(ResponseToolSchema, { maxItems: 128 })),
    tool_choice: Type.Optional(ResponseToolChoiceSchema),
    parallel_tool_calls: Type.Optional(orNull(Type.Boolean())),
    text: Type.Optional(orNull(Type.Object({ format: Type.Optional(TextFormatSchema), verbosity: Type.Optional(orNull(StringEnum(['low', 'medium', 'high']))) }, { additionalProperties: false }))),
    reasoning: Type.Optional(orNull(Type.Object(
      { effort: Type.Optional(orNull(Effort)), summary: Type.Optional(orNull(StringEnum(['auto', 'concise', 'detailed']))), generate_summary: Type.Optional(orNull(StringEnum(['auto', 'concise', 'detailed']))) },
      { additionalProperties: false },
    ))),
    max_output_tokens: Type.Optional(orNull(Type.Integer({ minimum: 16 }))),
    temperature: Type.Optional(orNull(Type.Number({ minimum: 0, maximum: 2 }))),
    top_p: Type.Optional(orNull(Type.Number({ minimum: 0, maximum: 1 }))),
    metadata: Type.Optional(orNull(Metadata)),
    store: Type.Optional(orNull(Type.Boolean({ description: 'Default true: the response is stored for GET, input_items and previous_response_id' }))),
    previous_response_id: Type.Optional(orNull(Type.String({ minLength: 1, maxLength: 256 }))),
    stream: Type.Optional(orNull(Type.Boolean({ description: 'true: the answer as text/event-stream Responses events (docs/responses.md)' }))),
    stream_options: Type.Optional(orNull(Type.Object({ include_obfuscation: Type.Optional(Type.Boolean()) }, { additionalProperties: false }))),
    user: Type.Optional(Type.String()),
    safety_identifier: Type.Optional(orNull(Type.String({ maxLength: 64 }))),
    prompt_cache_key: Type.Optional(orNull(Type.String())),
    service_tier: Type.Optional(orNull(StringEnum(['auto', 'default', 'flex', 'scale', 'priority']))),
    truncation: Type.Optional(orNull(StringEnum(['auto', 'disabled']))),
    include: Type.Optional(orNull(Type.Array(Type.String(), { maxItems: 32, description: 'Accepted; nothing extra is included' }))),
    background: Type.Optional(orNull(Type.Boolean({ description: 'Only false: background responses are not offered' }))),
  },
  { additionalProperties: false, description: "OpenAI's Responses request, the members clients use; any other member is 400 unknown_parameter." },
);
export type CreateResponse = Static<typeof CreateResponseSchema>;

// ---------------------------------------------------------------- answers

export const ResponseUsageSchema = Type.Object({
  input_tokens: Type.Integer(),
  input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
  output_tokens: Type.Integer(),
  output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
  total_tokens: Type.Integer(),
});
export type ResponseUsage = Static<typeof ResponseUsageSchema>;

export const ResponseStatusSchema = StringEnum(['completed', 'failed', 'in_progress', 'incomplete']);

export const ResponseObjectSchema = Type.Object({
  id: Type.String({ description: '`resp_` and 32 hex digits' }),
  object: Type.Literal('response'),
  created_at: Type.Integer(),
  completed_at: orNull(Type.Integer()),
  status: ResponseStatusSchema,
  error: orNull(Type.Object({ code: Type.String(), message: Type.String() })),
  incomplete_details: orNull(Type.Object({ reason: Type.String() })),
  instructions: orNull(Type.String()),
  max_output_tokens: orNull(Type.Integer()),
  metadata: Type.Record(Type.String(), Type.String()),
  model: Type.String({ description: 'The model name as requested; the vendor’s exact model is in the x-ladder-model header' }),
  output: Type.Array(Loose('a message {id, role: "assistant", status, content: [output_text | refusal]}, a function_call {id, call_id, name, arguments, status} or a reasoning {id, summary}')),
  parallel_tool_calls: Type.Boolean(),
  previous_response_id: orNull(Type.String()),
  reasoning: Type.Object({ effort: orNull(Type.String()), summary: orNull(Type.String()) }),
  service_tier: orNull(Type.String()),
  store: Type.Boolean(),
  temperature: orNull(Type.Number()),
  text: Type.Object({ format: Loose('the text.format asked'), verbosity: orNull(Type.String()) }),
  tool_choice: Type.Union([Type.String(), Loose('a tool choice')]),
  tools: Type.Array(Loose('a function tool')),
  top_p: orNull(Type.Number()),
  truncation: Type.String(),
  usage: orNull(ResponseUsageSchema),
  user: orNull(Type.String()),
});
export type ResponseObject = Static<typeof ResponseObjectSchema>;

export const ResponseIdParamsSchema = Type.Object({ id: Type.String({ description: 'A response id (resp_...)' }) });

export const DeletedResponseSchema = Type.Object({ id: Type.String(), object: Type.Literal('response'), deleted: Type.Literal(true) });

export const InputItemsQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.String({ description: 'An integer from 1 to 100; default 20' })),
    order: Type.Optional(StringEnum(['asc', 'desc'], { description: 'Default desc (the last input item first), as OpenAI lists them' })),
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'An item id: the page starts after it' })),
    include: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  },
  { additionalProperties: false },
);

export const InputItemListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Loose('an input item as stored, with its id')),
  first_id: orNull(Type.String()),
  last_id: orNull(Type.String()),
  has_more: Type.Boolean(),
});
export type InputItemList = Static<typeof InputItemListSchema>;
