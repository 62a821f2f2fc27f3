// The live event stream of a pipeline instance (docs/pipelines-events.md), and the instance
// body its terminal event carries (the same body GET /v1/pipelines/instances/{id} answers).
import { Type, type Static } from '@sinclair/typebox';
import { ChatCompletionSchema } from './chat.js';
import { Timestamp, Uuid } from './common.js';

const UsageSchema = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});

export const InstanceStatusSchema = Type.Union(
  ['pending', 'running', 'completed', 'failed', 'cancelled'].map((s) => Type.Literal(s)),
  { description: '`pending` until a worker starts it; `completed`, `failed` and `cancelled` are final' },
);

export const PipelineInstanceSchema = Type.Object({
  instanceId: Uuid,
  object: Type.Literal('pipeline.instance'),
  status: InstanceStatusSchema,
  mode: Type.Union([Type.Literal('sync'), Type.Literal('async')]),
  author: Type.String(),
  template: Type.String({ description: 'The ladder slug' }),
  version: Type.Integer({ description: 'The ladder version that ran' }),
  model: Type.String(),
  knobs: Type.Record(Type.String(), Type.Number()),
  created_at: Timestamp,
  started_at: Type.Union([Timestamp, Type.Null()]),
  finished_at: Type.Union([Timestamp, Type.Null()]),
  attempts: Type.Integer(),
  progress: Type.Object({ model_calls: Type.Integer(), steps_completed: Type.Integer(), steps_total: Type.Integer() }),
  usage: UsageSchema,
  spend_usd: Type.Number(),
  result: Type.Union([ChatCompletionSchema, Type.Null()]),
  error: Type.Union([
    Type.Object({ message: Type.String(), type: Type.String(), code: Type.String(), status: Type.Integer() }),
    Type.Null(),
  ]),
});
export type PipelineInstance = Static<typeof PipelineInstanceSchema>;

/** Malformed ids are checked by hand, so that they get the same 404 as unknown ones. */
export const InstanceParamsSchema = Type.Object({ id: Type.String({ description: 'The instance id (a UUID)' }) });

export const EventStreamHeadersSchema = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({ description: 'Resume after this event id (seq): only later events are sent. Browsers send it when they reconnect.' }),
  ),
});

export const EVENT_STREAM_DESCRIPTION = [
  'A `text/event-stream` of the run’s events in order, each as `id: <seq>`, `event: <type>`, `data: <JSON>`: the recorded',
  'history first, then new events as they are written, by whichever process runs the instance. Types: `instance.started`,',
  '`step.started`, `node.completed`, `node.failed`, `step.completed`, and one terminal event (`instance.completed`,',
  '`instance.failed` or `instance.cancelled`) whose data is the instance as GET /v1/pipelines/instances/{id} answers it;',
  'the stream ends after it. Every other event’s data carries `at`, when it was recorded. A quiet stream gets a',
  '`: keep-alive` comment every SSE_KEEPALIVE_MS.',
].join(' ');
