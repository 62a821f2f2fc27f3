// Anthropic's Messages API (POST /v1/messages, /v1/messages/count_tokens): the request, the
// answer and the error shape, as Anthropic's SDK and the tools built on it send and read them.
// Content blocks are objects with a `type`; their members are checked per type in
// src/routes/messages/blocks.ts, so that a mistake gets a message naming the block.
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './common.js';

const Block = Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true, description: 'A content block: text, image, document, tool_use, tool_result, thinking, redacted_thinking' });

export const AnthropicMessageSchema = Type.Object(
  {
    role: StringEnum(['user', 'assistant']),
    content: Type.Union([Type.String(), Type.Array(Block, { maxItems: 10_000 })]),
  },
  { additionalProperties: false },
);

const TextBlocks = Type.Array(Type.Object({ type: Type.Literal('text'), text: Type.String() }, { additionalProperties: true }));

const AnthropicTool = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    type: Type.Optional(Type.String({ description: '"custom" (or absent) for your own tools; Anthropic\'s server tools have their own types' })),
    description: Type.Optional(Type.String()),
    input_schema: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

const ToolChoice = Type.Object(
  {
    type: StringEnum(['auto', 'any', 'tool', 'none']),
    name: Type.Optional(Type.String()),
    disable_parallel_tool_use: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const Display = Type.Optional(Type.Union([StringEnum(['summarized', 'omitted']), Type.Null()]));
const Thinking = Type.Union([
  Type.Object({ type: Type.Literal('enabled'), budget_tokens: Type.Integer({ minimum: 1024 }), display: Display }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('adaptive'), display: Display }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('between_tools') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('disabled') }, { additionalProperties: false }),
], { description: 'enabled (a budget), adaptive, between_tools or disabled; other vendors get it as a reasoning effort' });

const OutputConfig = Type.Object(
  {
    effort: Type.Optional(Type.Union([StringEnum(['low', 'medium', 'high', 'xhigh', 'max']), Type.Null()])),
    format: Type.Optional(Type.Union([
      Type.Object({ type: Type.Literal('json_schema'), schema: Type.Object({}, { additionalProperties: true }) }, { additionalProperties: false }),
      Type.Null(),
    ])),
  },
  { additionalProperties: false, description: 'effort: a reasoning effort elsewhere; format: a json_schema response_format elsewhere' },
);

/** Members that change nothing another vendor can act on (caching, routing, speed): Anthropic gets them, the others do without. */
const AnthropicSettings = {
  cache_control: Type.Optional(Type.Union([Type.Object({ type: Type.Literal('ephemeral') }, { additionalProperties: true }), Type.Null()])),
  speed: Type.Optional(Type.Union([StringEnum(['standard', 'fast']), Type.Null()])),
};

/** The members a count_tokens request may carry too. */
const Counted = {
  model: Type.String({ minLength: 1, maxLength: 256 }),
  messages: Type.Array(AnthropicMessageSchema, { minItems: 1, maxItems: 10_000 }),
  system: Type.Optional(Type.Union([Type.String(), TextBlocks])),
  tools: Type.Optional(Type.Array(AnthropicTool, { maxItems: 128 })),
  tool_choice: Type.Optional(ToolChoice),
  thinking: Type.Optional(Thinking),
  output_config: Type.Optional(OutputConfig),
  ...AnthropicSettings,
};

export const MessagesRequestSchema = Type.Object(
  {
    ...Counted,
    max_tokens: Type.Integer({ minimum: 1 }),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0, description: 'Sent to Anthropic and Gemini; a vendor without it is skipped' })),
    metadata: Type.Optional(Type.Object({ user_id: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])) }, { additionalProperties: false })),
    stream: Type.Optional(Type.Boolean()),
    service_tier: Type.Optional(StringEnum(['auto', 'standard_only'])),
    container: Type.Optional(Type.Union([Type.String(), Type.Object({}, { additionalProperties: true }), Type.Null()])),
    diagnostics: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
    inference_geo: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    mcp_servers: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'Anthropic only: other vendors are skipped' })),
    context_management: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
  },
  { additionalProperties: false, description: "Anthropic's Messages request; any other member is 400." },
);
export type MessagesRequest = Static<typeof MessagesRequestSchema>;

export const CountTokensRequestSchema = Type.Object(Counted, { additionalProperties: false, description: "Anthropic's count_tokens request" });
export type CountTokensRequest = Static<typeof CountTokensRequestSchema>;

export const CountTokensSchema = Type.Object({ input_tokens: Type.Integer() });

export const AnthropicUsageSchema = Type.Object({
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cache_creation_input_tokens: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  cache_read_input_tokens: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
}, { additionalProperties: true });

export const MessageAnswerSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('message'),
    role: Type.Literal('assistant'),
    model: Type.String(),
    content: Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    stop_reason: Type.Union([StringEnum(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded']), Type.Null()]),
    stop_sequence: Type.Union([Type.String(), Type.Null()]),
    usage: AnthropicUsageSchema,
  },
  { additionalProperties: true },
);
export type MessageAnswer = Static<typeof MessageAnswerSchema>;

/** Anthropic's error types; which status each goes with: src/routes/messages/errors.ts. */
export const ANTHROPIC_ERROR_TYPES = [
  'invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error',
  'request_too_large', 'rate_limit_error', 'api_error', 'timeout_error', 'overloaded_error',
] as const;

export const AnthropicErrorSchema = Type.Object(
  {
    type: Type.Literal('error'),
    error: Type.Object({ type: StringEnum(ANTHROPIC_ERROR_TYPES), message: Type.String() }),
    request_id: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'AnthropicError', description: "Anthropic's error shape, on /v1/messages routes only (every other route answers the Error envelope)" },
);
export type AnthropicErrorBody = Static<typeof AnthropicErrorSchema>;
