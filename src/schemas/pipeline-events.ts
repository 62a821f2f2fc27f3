// The live event stream of a pipeline instance (docs/pipelines-events.md). Its terminal event
// carries the instance as GET /v1/pipelines/instances/{id} answers it (InstanceSchema).
import { Type } from '@sinclair/typebox';

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
  '`: keep-alive` comment every SSE_KEEPALIVE_MS. A process serves at most SSE_MAX_STREAMS streams (503 `too_many_streams`),',
  'an account at most SSE_MAX_STREAMS_PER_ACCOUNT of them (429 `too_many_account_streams`); a client that reads nothing for',
  'SSE_IDLE_TIMEOUT_MS while more is waiting is disconnected. A key that may not see the run’s ladder gets 404.',
].join(' ');
