// The chat completion wire format (OpenAI's), shared by direct and ladder completions: every
// member of OpenAI's current request, and the response with all its choices.
import { Type, type Static } from '@sinclair/typebox';
import {
  MessagesSchema,
  ResponseFormatSchema,
  TextPartSchema,
  ToolCallSchema,
  ToolChoiceSchema,
  ToolSchema,
  orNull,
} from './chat-messages.js';
import { StringEnum } from './common.js';

export { MessageSchema, MessagesSchema } from './chat-messages.js';

/** Background runs: accepted and refused when true (400 stream_not_supported); their events stream instead. */
export const StreamSchema = Type.Optional(orNull(Type.Boolean({ description: 'Must be omitted, null or false' })));

/** Synchronous ladder runs: true streams the run as server-sent events (docs/streaming.md, "Ladder runs"). */
export const LadderStreamSchema = Type.Optional(orNull(Type.Boolean({
  description: 'true: the run streamed as text/event-stream chat.completion.chunk events ending with data: [DONE], keep-alive comments while earlier steps run (docs/streaming.md)',
})));

/** Direct chat: true streams the answer as server-sent events (docs/streaming.md). */
export const DirectStreamSchema = Type.Optional(orNull(Type.Boolean({ description: 'true: the answer streamed as text/event-stream chat.completion.chunk events ending with data: [DONE] (docs/streaming.md)' })));

const Penalty = Type.Number({ minimum: -2, maximum: 2 });
const Effort = StringEnum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);

/**
 * Every optional member of OpenAI's request besides messages and stream. `null` always means
 * "not given". Which vendor honours which: docs/providers.md.
 */
export const ChatParameters = {
  audio: Type.Optional(orNull(Type.Object(
    {
      format: StringEnum(['wav', 'aac', 'mp3', 'flac', 'opus', 'pcm16']),
      voice: Type.Union([Type.String(), Type.Object({ id: Type.String() }, { additionalProperties: false })]),
    },
    { additionalProperties: false },
  ))),
  frequency_penalty: Type.Optional(orNull(Penalty)),
  function_call: Type.Optional(Type.Union(
    [StringEnum(['none', 'auto']), Type.Object({ name: Type.String() }, { additionalProperties: false })],
    { description: 'Deprecated (use tool_choice): "none", "auto" or {name}' },
  )),
  functions: Type.Optional(Type.Array(
    Type.Object(
      { name: Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$' }), description: Type.Optional(Type.String()), parameters: Type.Optional(Type.Object({}, { additionalProperties: true })) },
      { additionalProperties: false },
    ),
    { minItems: 1, maxItems: 128, description: 'Deprecated (use tools)' },
  )),
  logit_bias: Type.Optional(orNull(Type.Object(
    {},
    { patternProperties: { '^[0-9]+$': Type.Integer({ minimum: -100, maximum: 100 }) }, additionalProperties: false, description: 'Token id to bias, -100 to 100' },
  ))),
  logprobs: Type.Optional(orNull(Type.Boolean())),
  max_completion_tokens: Type.Optional(orNull(Type.Integer({ minimum: 1 }))),
  max_tokens: Type.Optional(orNull(Type.Integer({ minimum: 1, description: 'Deprecated by OpenAI in favour of max_completion_tokens' }))),
  metadata: Type.Optional(orNull(Type.Object(
    {},
    { patternProperties: { '^.{1,64}$': Type.String({ maxLength: 512 }) }, additionalProperties: false, maxProperties: 16, description: 'Up to 16 string pairs; stored by OpenAI, a no-op elsewhere' },
  ))),
  modalities: Type.Optional(orNull(Type.Array(StringEnum(['text', 'audio']), { minItems: 1, maxItems: 2 }))),
  moderation: Type.Optional(orNull(Type.Object(
    { model: Type.String(), policy: Type.Optional(Type.Unknown()) },
    { additionalProperties: false, description: 'OpenAI only' },
  ))),
  n: Type.Optional(orNull(Type.Integer({ minimum: 1, maximum: 128, description: 'How many choices' }))),
  parallel_tool_calls: Type.Optional(Type.Boolean()),
  prediction: Type.Optional(orNull(Type.Object(
    { type: Type.Literal('content'), content: Type.Union([Type.String(), Type.Array(TextPartSchema, { minItems: 1 })]) },
    { additionalProperties: false },
  ))),
  presence_penalty: Type.Optional(orNull(Penalty)),
  prompt_cache_key: Type.Optional(orNull(Type.String())),
  prompt_cache_options: Type.Optional(Type.Object(
    { mode: Type.Optional(StringEnum(['implicit', 'explicit'])), ttl: Type.Optional(Type.Literal('30m')) },
    { additionalProperties: false },
  )),
  prompt_cache_retention: Type.Optional(orNull(StringEnum(['in_memory', '24h']))),
  reasoning_effort: Type.Optional(orNull(Effort)),
  response_format: Type.Optional(ResponseFormatSchema),
  safety_identifier: Type.Optional(orNull(Type.String({ maxLength: 64 }))),
  seed: Type.Optional(orNull(Type.Integer())),
  service_tier: Type.Optional(orNull(StringEnum(['auto', 'default', 'flex', 'scale', 'priority']))),
  stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1, maxItems: 4 }), Type.Null()], {
    description: 'a string or an array of at most 4 strings',
  })),
  store: Type.Optional(orNull(Type.Boolean())),
  stream_options: Type.Optional(orNull(Type.Object(
    { include_usage: Type.Optional(Type.Boolean()), include_obfuscation: Type.Optional(Type.Boolean()) },
    { additionalProperties: false, description: 'With stream: true; include_usage adds a last chunk with the usage' },
  ))),
  temperature: Type.Optional(orNull(Type.Number({ minimum: 0, maximum: 2 }))),
  tool_choice: Type.Optional(ToolChoiceSchema),
  tools: Type.Optional(Type.Array(ToolSchema, { maxItems: 128 })),
  top_logprobs: Type.Optional(orNull(Type.Integer({ minimum: 0, maximum: 20 }))),
  top_p: Type.Optional(orNull(Type.Number({ minimum: 0, maximum: 1 }))),
  user: Type.Optional(Type.String({ description: 'End-user id; sent where the vendor has one, a no-op elsewhere' })),
  verbosity: Type.Optional(orNull(StringEnum(['low', 'medium', 'high']))),
  web_search_options: Type.Optional(Type.Object(
    {
      search_context_size: Type.Optional(StringEnum(['low', 'medium', 'high'])),
      user_location: Type.Optional(orNull(Type.Object({}, { additionalProperties: true }))),
    },
    { additionalProperties: false },
  )),
};

export const DirectChatRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    messages: MessagesSchema,
    stream: DirectStreamSchema,
    ...ChatParameters,
  },
  { additionalProperties: false, description: "OpenAI's chat completions request; any other member is 400 unknown_parameter." },
);
export type DirectChatRequest = Static<typeof DirectChatRequestSchema>;

// ---------------------------------------------------------------- response

const TopLogprob = Type.Object({ token: Type.String(), logprob: Type.Number(), bytes: orNull(Type.Array(Type.Integer())) });
const TokenLogprob = Type.Object({
  token: Type.String(),
  logprob: Type.Number(),
  bytes: orNull(Type.Array(Type.Integer())),
  top_logprobs: Type.Array(TopLogprob),
});
export const LogprobsSchema = orNull(Type.Object({
  content: orNull(Type.Array(TokenLogprob)),
  refusal: Type.Optional(orNull(Type.Array(TokenLogprob))),
}));
export type Logprobs = Static<typeof LogprobsSchema>;

export const AssistantMessageSchema = Type.Object({
  role: Type.Literal('assistant'),
  content: orNull(Type.String()),
  refusal: orNull(Type.String()),
  tool_calls: Type.Optional(Type.Array(ToolCallSchema, { description: 'Ids, names and argument strings exactly as the vendor produced them' })),
  function_call: Type.Optional(Type.Object({ name: Type.String(), arguments: Type.String() })),
  annotations: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  audio: Type.Optional(orNull(Type.Object({}, { additionalProperties: true }))),
});
export type AssistantMessage = Static<typeof AssistantMessageSchema>;

export const FinishReasonSchema = StringEnum(['stop', 'length', 'tool_calls', 'content_filter']);

export const ChoiceSchema = Type.Object({
  index: Type.Integer(),
  message: AssistantMessageSchema,
  logprobs: LogprobsSchema,
  finish_reason: FinishReasonSchema,
});
export type Choice = Static<typeof ChoiceSchema>;

export const UsageSchema = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
  prompt_tokens_details: Type.Optional(Type.Object({
    cached_tokens: Type.Optional(Type.Integer()),
    audio_tokens: Type.Optional(Type.Integer()),
  }, { description: 'When the vendor reports them' })),
  completion_tokens_details: Type.Optional(Type.Object({
    reasoning_tokens: Type.Optional(Type.Integer()),
    audio_tokens: Type.Optional(Type.Integer()),
    accepted_prediction_tokens: Type.Optional(Type.Integer()),
    rejected_prediction_tokens: Type.Optional(Type.Integer()),
  }, { description: 'When the vendor reports them' })),
});
export type UsageOut = Static<typeof UsageSchema>;

export const ChatCompletionSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer(),
  model: Type.String({ description: 'The model name as requested; the vendor’s exact model is in the x-ladder-model header' }),
  choices: Type.Array(ChoiceSchema, { description: 'Every choice the vendor returned (n > 1 gives several)' }),
  usage: UsageSchema,
  system_fingerprint: Type.Optional(Type.String({ description: 'When the vendor reports one' })),
  service_tier: Type.Optional(Type.String({ description: 'When the vendor reports one' })),
});
export type ChatCompletion = Static<typeof ChatCompletionSchema>;
