// Ladders: metadata, authoring, validation and ladder chat completions (docs/ladders-api.md).
import { Type, type Static } from '@sinclair/typebox';
import { ChatParameters, LadderStreamSchema, MessagesSchema } from './chat.js';
import { Slug, StringEnum, Timestamp, Username, Uuid } from './common.js';
import { LADDER_CONFIG } from './ladder-config.js';

export const VisibilitySchema = StringEnum(['private', 'unlisted', 'public'], {
  description: '`private`: the owner only; `unlisted`: anyone with the URL; `public`: anyone, and listed',
});

/**
 * A ladder config as given to validation and saving: any value passes the request schema, so that
 * the validator reports every problem of it at once. The OpenAPI document shows LadderConfigSchema.
 */
const ConfigSchema = Type.Unknown({ title: LADDER_CONFIG, description: 'A ladder config (docs/ladder-language.md)' });

const AllowedTargetsSchema = Type.Object(
  { strategy: Type.String({ description: '`universal` (any model) or `constrained`' }) },
  { additionalProperties: true },
);

export const LadderMetadataSchema = Type.Object({
  id: Uuid,
  author: Type.String({ description: 'Owner username' }),
  slug: Type.String({ description: 'The ladder segment of its URL' }),
  name: Type.String({ description: "The config's name" }),
  description: Type.String(),
  version: Type.Integer({ minimum: 1, description: 'Starts at 1, one more per save' }),
  usage_visibility: VisibilitySchema,
  config_visibility: VisibilitySchema,
  created_at: Timestamp,
  updated_at: Timestamp,
  config: Type.Optional(Type.Object({}, { additionalProperties: true, title: LADDER_CONFIG, description: 'Only for the owner, or when config_visibility is public' })),
  allowed_targets: Type.Optional(AllowedTargetsSchema),
});
export type LadderMetadata = Static<typeof LadderMetadataSchema>;

export const LadderListSchema = Type.Object({ data: Type.Array(LadderMetadataSchema) });

export const AuthorParamsSchema = Type.Object({ author: Username });
export const LadderParamsSchema = Type.Object({ author: Username, ladder: Slug });
export type LadderParams = Static<typeof LadderParamsSchema>;
export const LadderVersionQuerySchema = Type.Object(
  { version: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,8}$', description: 'An earlier version number' })) },
  { additionalProperties: false },
);

export const SaveLadderBodySchema = Type.Object(
  {
    config: ConfigSchema,
    description: Type.Optional(Type.String({ maxLength: 2000, description: "Default: the config's description, else the saved one, else empty" })),
    usage_visibility: Type.Optional(VisibilitySchema),
    config_visibility: Type.Optional(VisibilitySchema),
  },
  { additionalProperties: false },
);
export type SaveLadderBody = Static<typeof SaveLadderBodySchema>;

export const ValidateBodySchema = Type.Object({ config: ConfigSchema }, { additionalProperties: false });

export const ValidationResultSchema = Type.Object({
  valid: Type.Boolean({ description: 'true: the config can be saved and executed' }),
  errors: Type.Array(Type.String(), {
    maxItems: 101,
    description:
      'The problems found, each naming where it is, in document order (schema problems first): at most 100, then, ' +
      'when there are more, one last entry `config: N more errors not listed (at most 100 are reported)`',
  }),
  error_count: Type.Integer({ minimum: 0, description: 'How many problems were found in all (0 when valid)' }),
});

export const LadderChatRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256, description: "Must pass the ladder's allowedTargets" }),
    messages: MessagesSchema,
    knobs: Type.Optional(Type.Unknown({ description: 'Knob id to number; out-of-range values are clamped' })),
    stream: LadderStreamSchema,
    ...ChatParameters,
  },
  {
    additionalProperties: false,
    description:
      "OpenAI's request members are recognised, but a ladder uses only model, messages and knobs: tools, n > 1, " +
      'response_format, sampling settings and the like are 400 unsupported_parameter; user, metadata, store, ' +
      'service_tier and the prompt_cache_* members are accepted without effect. Any other member is 400 unknown_parameter.',
  },
);
export type LadderChatRequest = Static<typeof LadderChatRequestSchema>;
