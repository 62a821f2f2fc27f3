// Messages, content parts and tools of OpenAI's chat completions request. One object schema per
// message (role-specific rules are checked in routes/chat/messages.ts), so that a wrong field is
// named precisely instead of drowning in a failed union.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { StringEnum } from './common.js';

/**
 * Also accepts `null` (OpenAI's "not given"): OpenAPI 3.0's `nullable`, which Ajv reads too. An
 * enum lists null among its values, as OpenAPI 3.0 requires and as Ajv's enum check needs.
 */
export function orNull<T extends TSchema>(schema: T) {
  const branches = schema.anyOf as TSchema[] | undefined;
  if (branches) return Type.Unsafe<Static<T> | null>({ ...schema, anyOf: [...branches, Type.Null()] });
  if (Array.isArray(schema.enum)) return Type.Unsafe<Static<T> | null>({ ...schema, enum: [...schema.enum, null], nullable: true });
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

const CacheBreakpoint = Type.Optional(Type.Object({ mode: Type.Literal('explicit') }, { additionalProperties: false }));

export const TextPartSchema = Type.Object(
  { type: Type.Literal('text'), text: Type.String(), prompt_cache_breakpoint: CacheBreakpoint },
  { additionalProperties: false },
);
const ImagePart = Type.Object(
  {
    type: Type.Literal('image_url'),
    image_url: Type.Object(
      {
        url: Type.String({ minLength: 1, description: 'An https URL or a data: URL' }),
        detail: Type.Optional(StringEnum(['auto', 'low', 'high'])),
      },
      { additionalProperties: false },
    ),
    prompt_cache_breakpoint: CacheBreakpoint,
  },
  { additionalProperties: false },
);
const InputAudioPart = Type.Object(
  {
    type: Type.Literal('input_audio'),
    input_audio: Type.Object(
      { data: Type.String({ minLength: 1, description: 'Base64 audio' }), format: StringEnum(['wav', 'mp3']) },
      { additionalProperties: false },
    ),
    prompt_cache_breakpoint: CacheBreakpoint,
  },
  { additionalProperties: false },
);
const FilePart = Type.Object(
  {
    type: Type.Literal('file'),
    file: Type.Object(
      {
        file_data: Type.Optional(Type.String({ description: 'A base64 data URL, e.g. data:application/pdf;base64,...' })),
        file_id: Type.Optional(Type.String()),
        filename: Type.Optional(Type.String()),
      },
      { additionalProperties: false },
    ),
    prompt_cache_breakpoint: CacheBreakpoint,
  },
  { additionalProperties: false },
);
const RefusalPart = Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() }, { additionalProperties: false });

export const ContentPartSchema = Type.Union([TextPartSchema, ImagePart, InputAudioPart, FilePart, RefusalPart], {
  description: 'a content part: {type: "text", text}, {type: "image_url", image_url: {url}}, {type: "input_audio", input_audio: {data, format}}, {type: "file", file: {...}} or {type: "refusal", refusal}',
});
export type ContentPartInput = Static<typeof ContentPartSchema>;

export const FunctionToolCallSchema = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    type: Type.Literal('function'),
    function: Type.Object({ name: Type.String(), arguments: Type.String({ description: 'JSON text, exactly as the model produced it' }) }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);
const CustomToolCall = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    type: Type.Literal('custom'),
    custom: Type.Object({ name: Type.String(), input: Type.String() }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);
export const ToolCallSchema = Type.Union([FunctionToolCallSchema, CustomToolCall], {
  description: 'a tool call: {id, type: "function", function: {name, arguments}} or {id, type: "custom", custom: {name, input}}',
});
export type ToolCall = Static<typeof ToolCallSchema>;

const FunctionCall = Type.Object({ name: Type.String(), arguments: Type.String() }, { additionalProperties: false });

export const ROLES = ['developer', 'system', 'user', 'assistant', 'tool', 'function'] as const;

export const MessageSchema = Type.Object(
  {
    role: StringEnum(ROLES),
    content: Type.Optional(
      Type.Union([Type.String(), Type.Array(ContentPartSchema, { minItems: 1 }), Type.Null()], {
        description: 'a string or a non-empty array of content parts',
      }),
    ),
    name: Type.Optional(Type.String({ description: 'Participant name; required for role "function"' })),
    tool_calls: Type.Optional(Type.Array(ToolCallSchema, { description: 'Assistant messages only' })),
    tool_call_id: Type.Optional(Type.String({ minLength: 1, description: 'Tool messages only: the call this answers' })),
    refusal: Type.Optional(orNull(Type.String({ description: 'Assistant messages only' }))),
    audio: Type.Optional(orNull(Type.Object({ id: Type.String() }, { additionalProperties: false, description: 'Assistant messages only' }))),
    function_call: Type.Optional(orNull(FunctionCall)),
  },
  {
    additionalProperties: false,
    description:
      'role `developer` or `system` (text), `user` (text, image_url, input_audio, file), `assistant` (content may be null ' +
      'when it carries tool_calls), `tool` (with tool_call_id), or the deprecated `function` (with name)',
  },
);
export type RequestMessage = Static<typeof MessageSchema>;

export const MessagesSchema = Type.Array(MessageSchema, { minItems: 1, maxItems: 10_000 });

const ToolName = Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$', description: 'Letters, digits, _ and -, at most 64' });
const JsonSchemaObject = Type.Object({}, { additionalProperties: true, description: 'A JSON Schema object' });

export const FunctionToolSchema = Type.Object(
  {
    type: Type.Literal('function'),
    function: Type.Object(
      {
        name: ToolName,
        description: Type.Optional(Type.String()),
        parameters: Type.Optional(JsonSchemaObject),
        strict: Type.Optional(orNull(Type.Boolean())),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
const CustomTool = Type.Object(
  {
    type: Type.Literal('custom'),
    custom: Type.Object(
      { name: ToolName, description: Type.Optional(Type.String()), format: Type.Optional(Type.Object({}, { additionalProperties: true })) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export const ToolSchema = Type.Union([FunctionToolSchema, CustomTool], {
  description: 'a tool: {type: "function", function: {name, description?, parameters?, strict?}} or {type: "custom", custom: {name, ...}}',
});
export type Tool = Static<typeof ToolSchema>;

export const ToolChoiceSchema = Type.Union(
  [
    StringEnum(['none', 'auto', 'required']),
    Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: Type.String() }, { additionalProperties: false }) }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('custom'), custom: Type.Object({ name: Type.String() }, { additionalProperties: false }) }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('allowed_tools'),
        allowed_tools: Type.Object(
          { mode: StringEnum(['auto', 'required']), tools: Type.Array(Type.Object({}, { additionalProperties: true })) },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  ],
  { description: '"none", "auto", "required", {type: "function", function: {name}}, {type: "custom", custom: {name}} or {type: "allowed_tools", allowed_tools: {mode, tools}}' },
);
export type ToolChoice = Static<typeof ToolChoiceSchema>;

export const ResponseFormatSchema = Type.Union(
  [
    Type.Object({ type: Type.Literal('text') }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('json_object') }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('json_schema'),
        json_schema: Type.Object(
          {
            name: ToolName,
            description: Type.Optional(Type.String()),
            schema: Type.Optional(JsonSchemaObject),
            strict: Type.Optional(orNull(Type.Boolean())),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  ],
  { description: '{type: "text"}, {type: "json_object"} or {type: "json_schema", json_schema: {name, schema, strict?}}' },
);
export type ResponseFormat = Static<typeof ResponseFormatSchema>;
