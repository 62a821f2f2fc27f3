// The chat completion wire format (OpenAI's), shared by direct and ladder completions.
import { Type, type Static } from '@sinclair/typebox';

const TextPart = Type.Object({ type: Type.Literal('text'), text: Type.String() });
const ImagePart = Type.Object({
  type: Type.Literal('image_url'),
  image_url: Type.Object({
    url: Type.String({ minLength: 1, description: 'An https URL or a data: URL' }),
    detail: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('low'), Type.Literal('high')])),
  }),
});

export const MessageSchema = Type.Object({
  role: Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.Union([Type.String(), Type.Array(Type.Union([TextPart, ImagePart], { description: 'a content part: {type: "text", text} or {type: "image_url", image_url: {url}}' }), { minItems: 1 })], {
    description: 'a string or a non-empty array of content parts',
  }),
  name: Type.Optional(Type.String()),
});

export const MessagesSchema = Type.Array(MessageSchema, { minItems: 1, maxItems: 10_000 });

/** Accepted and rejected when true: streaming is not supported yet. */
export const StreamSchema = Type.Optional(Type.Boolean({ description: 'Must be omitted or false' }));

export const DirectChatRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    messages: MessagesSchema,
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    stream: StreamSchema,
  },
  { description: 'Other OpenAI parameters are accepted and ignored.' },
);
export type DirectChatRequest = Static<typeof DirectChatRequestSchema>;

export const ChatCompletionSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Type.Integer(),
      message: Type.Object({ role: Type.Literal('assistant'), content: Type.String() }),
      finish_reason: Type.String(),
    }),
  ),
  usage: Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});
export type ChatCompletion = Static<typeof ChatCompletionSchema>;
