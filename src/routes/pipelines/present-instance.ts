// An instance row as the API shows it: the body of GET /v1/pipelines/instances/{id} and of the
// terminal event of its event stream. (The pipelines routes have a presenter of their own; the
// two are to be one.)
import type { InstanceRow } from '../../services/instances.js';
import type { PipelineInstance } from '../../schemas/pipeline-events.js';
import { chatCompletion } from '../chat/completion.js';

const NO_USAGE = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function presentInstance(row: InstanceRow): PipelineInstance {
  const usage = row.usage ?? NO_USAGE;
  const result =
    row.status === 'completed' && row.answer !== null
      ? { ...chatCompletion(`ldr-${row.id}`, `${row.author}/${row.slug}`, row.answer, 'stop', usage), created: unixSeconds(row.finishedAt ?? row.createdAt) }
      : null;
  return {
    instanceId: row.id,
    object: 'pipeline.instance',
    status: row.status,
    mode: row.mode,
    author: row.author,
    template: row.slug,
    version: row.ladderVersion,
    model: row.model,
    knobs: row.knobs,
    created_at: row.createdAt.toISOString(),
    started_at: iso(row.startedAt),
    finished_at: iso(row.finishedAt),
    attempts: row.attempts,
    progress: { model_calls: row.modelCalls, steps_completed: row.stepsCompleted, steps_total: row.stepsTotal },
    usage,
    spend_usd: row.spendUsd,
    result,
    error: row.error ? { message: row.error.message, type: row.error.type, code: row.error.code, status: row.error.status } : null,
  };
}

const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);
