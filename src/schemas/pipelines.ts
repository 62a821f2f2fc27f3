// Background ladder runs: /v1/pipelines/instances (docs/pipelines.md).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ChatCompletionSchema, ChatParameters, MessagesSchema, StreamSchema } from './chat.js';
import { StringEnum, Timestamp, Uuid } from './common.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const INSTANCE_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;

export const InstanceStatusSchema = StringEnum(
  INSTANCE_STATUSES,
  { description: '`pending` → `running` → `completed` | `failed` | `cancelled`; `pending` may also become `cancelled`' },
);

export const StartInstanceBodySchema = Type.Object(
  {
    author: Type.String({ description: 'Owner username of the ladder' }),
    template: Type.String({ description: 'Slug of the ladder' }),
    model: Type.String({ minLength: 1, maxLength: 256, description: "Must pass the ladder's allowedTargets" }),
    messages: MessagesSchema,
    knobs: Type.Optional(Type.Unknown({ description: 'Knob id to number; out-of-range values are clamped' })),
    stream: StreamSchema,
    ...ChatParameters,
  },
  {
    additionalProperties: false,
    description:
      "As for a synchronous ladder run: OpenAI's request members are recognised, but tools, n > 1, response_format, " +
      'sampling settings and the like are 400 unsupported_parameter; any other member is 400 unknown_parameter.',
  },
);
export type StartInstanceBody = Static<typeof StartInstanceBodySchema>;

export const StartInstanceHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description: '1 to 255 printable ASCII characters. The same key within 24 hours answers the same instance instead of starting another run.',
    }),
  ),
});

export const InstanceStartedSchema = Type.Object(
  { instanceId: Uuid, status: Type.Literal('pending') },
  {
    description: 'Queued. A repeated Idempotency-Key answers this same body, whatever the status is now.',
    headers: {
      location: { type: 'string', description: '/v1/pipelines/instances/{instanceId}' },
      'idempotent-replayed': { type: 'string', description: '`true` when the answer repeats an earlier start with the same Idempotency-Key' },
    },
  },
);
export type InstanceStarted = Static<typeof InstanceStartedSchema>;

export const RerunBodySchema = Type.Object(
  {
    version: Type.Optional(Type.Integer({ minimum: 1, description: "A saved version of the ladder to run; default the source run's version" })),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "Default the source run's model; must pass the version's allowedTargets" })),
    messages: Type.Optional(MessagesSchema),
    knobs: Type.Optional(Type.Unknown({
      description: "Knob id to number, over the source run's effective values (those the version still defines); out-of-range values are clamped",
    })),
    wait: Type.Optional(Type.Boolean({
      description: 'true: answer 200 with the finished instance, as GET answers it, once the run ends (202 as without it if it has not ended within the platform run time limit)',
    })),
  },
  {
    additionalProperties: false,
    description:
      "Every member is optional: `{}` runs the source run again as it was. `messages` defaults to the source run's input " +
      '(its last user message). Every model call whose model and whole prompt equal a call the source run recorded reuses that call.',
  },
);
export type RerunBody = Static<typeof RerunBodySchema>;

const UsageSchema = ChatCompletionSchema.properties.usage;

export const InstanceErrorSchema = Type.Object(
  {
    message: Type.String(),
    type: Type.String(),
    code: Type.String(),
    status: Type.Integer({ description: 'The HTTP status the synchronous route answers for this failure (499 for a cancellation)' }),
  },
  { description: "The error envelope's error, and its HTTP status" },
);

export const InstanceSchema = Type.Object({
  instanceId: Uuid,
  object: Type.Literal('pipeline.instance'),
  status: InstanceStatusSchema,
  mode: StringEnum(['sync', 'async'], {
    description: '`sync`: run by POST /v1/{author}/{ladder}/chat/completions; `async`: started here',
  }),
  author: Type.String(),
  template: Type.String({ description: 'The ladder slug' }),
  version: Type.Integer({ description: 'The ladder version run' }),
  model: Type.String(),
  knobs: Type.Record(Type.String(), Type.Number(), { description: 'Effective knob values: defaults applied, clamped and rounded' }),
  created_at: Timestamp,
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
  cancel_requested_at: Nullable(Timestamp),
  attempts: Type.Integer({ description: 'How many times a process started or resumed the run' }),
  progress: Type.Object({
    model_calls: Type.Integer({ description: 'Model calls made (while running: calls finished so far)' }),
    steps_completed: Type.Integer(),
    steps_total: Type.Integer({ description: 'Step executions of a successful run (passes, group children, recursion children)' }),
  }),
  usage: UsageSchema,
  spend_usd: Type.Number({ description: 'What the run paid its vendors, in USD exact to the nano-dollar; reused calls cost nothing' }),
  rerun_of: Nullable(Type.String({ ...Uuid, description: 'The finished instance this one reruns (`POST .../rerun`); null for any other run' })),
  reused_calls: Type.Integer({
    description: 'Of `progress.model_calls`, those a rerun reused from its source run instead of calling the vendor (0 for any other run)',
  }),
  reused_spend_usd: Type.Number({ description: 'What the reused calls cost when they were made: the spend the rerun saved' }),
  result: Nullable(ChatCompletionSchema),
  error: Nullable(InstanceErrorSchema),
});
export type Instance = Static<typeof InstanceSchema>;

export const InstanceListItemSchema = Type.Omit(InstanceSchema, ['result'], {
  description: 'An instance without its `result`; GET the instance for it',
});
export type InstanceListItem = Static<typeof InstanceListItemSchema>;

export const InstanceListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(InstanceListItemSchema),
  has_more: Type.Boolean(),
  next_cursor: Nullable(Type.String({ description: 'Pass as `after` for the next page; null on the last' })),
});
export type InstanceList = Static<typeof InstanceListSchema>;

export const InstanceListQuerySchema = Type.Object(
  {
    status: Type.Optional(InstanceStatusSchema),
    author: Type.Optional(Type.String({ description: 'Only runs of this author’s ladders' })),
    template: Type.Optional(Type.String({ description: 'Only runs of ladders with this slug' })),
    limit: Type.Optional(Type.String({ description: 'An integer from 1 to 100; default 20' })),
    after: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page' })),
  },
  { additionalProperties: false },
);

// No format on the id: a malformed one gets the same 404 as an unknown one.
export const InstanceParamsSchema = Type.Object({ id: Type.String({ description: 'Instance id (a UUID)' }) });

export const NodeTraceSchema = Type.Object({
  node: Type.Integer({ description: '1-based' }),
  prompt: Type.String({ description: 'The prompt sent, cut to its first 4000 characters' }),
  prompt_chars: Type.Integer({ description: "The full prompt's length" }),
  output: Type.String(),
  usage: UsageSchema,
  cost_usd: Type.Number({ description: 'USD, exact to the nano-dollar: the call’s usage at the model’s price, rounded once, half up' }),
  provider: Nullable(Type.String({ description: 'The provider that answered; null when the call failed' })),
  latency_ms: Type.Number(),
  survived: Nullable(Type.Boolean({ description: "Whether the node passed the step's gate; null while the step is still running" })),
  error: Nullable(Type.String()),
  reused: Type.Boolean({ description: "true when a rerun reused its source run's identical call: no vendor call, cost 0" }),
  saved_usd: Type.Number({ description: 'On a reused call, what the source run paid for it; else 0' }),
});

export const StepTraceSchema = Type.Object({
  pass: Type.Integer({ description: '1-based pass at this depth' }),
  depth: Type.Integer({ description: '0 for the run itself, n for its n-th nested recursion child' }),
  step: Type.String({ description: 'Step id' }),
  group: Nullable(Type.String({ description: 'The group step, for the children of one' })),
  recursion_answer: Nullable(Type.String({ description: "The answer of the child run (one level deeper) that replaced a recursion step's output" })),
  nodes: Type.Array(NodeTraceSchema),
});
export type StepTraceView = Static<typeof StepTraceSchema>;

export const InstanceTraceSchema = Type.Object({
  object: Type.Literal('pipeline.trace'),
  instanceId: Uuid,
  status: InstanceStatusSchema,
  partial: Type.Boolean({ description: 'true while the run is pending or running: the steps so far, from its events' }),
  steps: Type.Array(StepTraceSchema),
});
export type InstanceTrace = Static<typeof InstanceTraceSchema>;
