// Instance rows as the API shows them: the instance, a list item, and the trace, built from
// the finished row or, while the run goes on, from its checkpointed calls and events.
import type { NodeTrace, StepTrace } from '../../ladders/engine/run-types.js';
import { nanosToUsd } from '../../money.js';
import type { Usage } from '../../providers/types.js';
import type { CallTotals, InstanceEvent } from '../../services/instance-reads.js';
import type { InstanceRow } from '../../services/instances.js';
import type { Instance, InstanceListItem, InstanceTrace, StepTraceView } from '../../schemas/pipelines.js';
import { chatCompletion, textChoice } from '../chat/completion.js';

const NO_USAGE: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
const FINISHED = new Set(['completed', 'failed', 'cancelled']);

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** Whether the run's totals are still to be recorded, so checkpointed calls say more. */
export const isUnderway = (row: InstanceRow) => row.status === 'running';

export function instanceListItem(row: InstanceRow, soFar?: CallTotals): InstanceListItem {
  const trace = (row.trace ?? []) as StepTrace[];
  // A running row's totals are written at the end; until then its checkpointed calls count.
  const live = soFar && isUnderway(row) && soFar.modelCalls > row.modelCalls;
  const usage = live ? soFar.usage : (row.usage ?? NO_USAGE);
  const finished = FINISHED.has(row.status);
  const stepsCompleted = finished ? Math.max(row.stepsCompleted, completedSteps(row.status, trace)) : row.stepsCompleted;
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
    cancel_requested_at: iso(row.cancelRequestedAt),
    attempts: row.attempts,
    progress: {
      model_calls: live ? soFar.modelCalls : row.modelCalls,
      steps_completed: stepsCompleted,
      steps_total: Math.max(row.stepsTotal, stepsCompleted),
    },
    usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens },
    spend_usd: nanosToUsd(live ? soFar.spendNanos : row.spendNanos),
    rerun_of: row.rerunOf,
    ...reuseOf(row, trace, soFar),
    error: row.error ? { message: row.error.message, type: row.error.type, code: row.error.code, status: row.error.status } : null,
  };
}

/** The instance; once completed, `result` is the chat completion the synchronous route answers. */
export function instanceView(row: InstanceRow, soFar?: CallTotals): Instance {
  const item = instanceListItem(row, soFar);
  const result =
    row.status === 'completed' && row.answer !== null && row.finishedAt
      ? chatCompletion(`ldr-${row.id}`, `${row.author}/${row.slug}`, [textChoice(row.answer, 'stop')], row.usage ?? NO_USAGE, undefined, row.finishedAt)
      : null;
  return { ...item, result };
}

// A finished run's reused calls are marked in its trace; a running one's, in its checkpoints.
function reuseOf(row: InstanceRow, trace: StepTrace[], soFar?: CallTotals): { reused_calls: number; reused_spend_usd: number } {
  if (row.rerunOf === null) return { reused_calls: 0, reused_spend_usd: 0 };
  if (soFar && isUnderway(row)) return { reused_calls: soFar.reusedCalls, reused_spend_usd: nanosToUsd(soFar.reusedSpendNanos) };
  let calls = 0;
  let saved = 0;
  for (const node of trace.flatMap((step) => step.nodes)) {
    if (!node.reused) continue;
    calls += 1;
    saved += node.savedNanos ?? 0;
  }
  return { reused_calls: calls, reused_spend_usd: nanosToUsd(saved) };
}

// A completed run completed every step it executed; a failed one, those none of whose nodes failed.
function completedSteps(status: string, trace: StepTrace[]): number {
  if (status === 'completed') return trace.length;
  return trace.filter((step) => step.nodes.length > 0 && step.nodes.every((node) => node.error === undefined)).length;
}

/** A finished run's trace is its stored one; a run still going has the steps its events report. */
export function traceView(row: InstanceRow, events: InstanceEvent[]): InstanceTrace {
  const finished = FINISHED.has(row.status);
  const steps = finished ? ((row.trace ?? []) as StepTrace[]).map(storedStep) : stepsFromEvents(events);
  return { object: 'pipeline.trace', instanceId: row.id, status: row.status, partial: !finished, steps };
}

function storedStep(step: StepTrace): StepTraceView {
  return {
    pass: step.pass,
    depth: step.depth,
    step: step.stepId,
    group: step.groupId ?? null,
    recursion_answer: step.recursionAnswer ?? null,
    nodes: step.nodes.map((node: NodeTrace) => ({
      node: node.node,
      prompt: node.prompt,
      prompt_chars: node.promptChars,
      output: node.output,
      usage: node.usage,
      cost_usd: nanosToUsd(node.costNanos),
      provider: node.provider,
      latency_ms: node.latencyMs,
      survived: node.survived,
      error: node.error ?? null,
      reused: node.reused === true,
      saved_usd: nanosToUsd(node.savedNanos ?? 0),
    })),
  };
}

const num = (value: unknown, fallback = 0) => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);
const str = (value: unknown) => (typeof value === 'string' ? value : null);

function usageOf(value: unknown): Usage {
  const u = (value ?? {}) as Record<string, unknown>;
  return { prompt_tokens: num(u.prompt_tokens), completion_tokens: num(u.completion_tokens), total_tokens: num(u.total_tokens) };
}

/**
 * The worker's events, folded into steps: `step.started` opens a step execution, and each
 * `node.completed` / `node.failed` joins the latest execution of its (depth, pass, step);
 * a node whose step.started is missing opens one itself.
 */
export function stepsFromEvents(events: InstanceEvent[]): StepTraceView[] {
  const steps: StepTraceView[] = [];
  const latest = new Map<string, StepTraceView>();
  const open = (data: Record<string, unknown>) => {
    const step: StepTraceView = {
      pass: num(data.pass, 1),
      depth: num(data.depth),
      step: str(data.step) ?? '',
      group: str(data.group),
      recursion_answer: null,
      nodes: [],
    };
    steps.push(step);
    latest.set(`${step.depth}/${step.pass}/${step.step}`, step);
    return step;
  };
  for (const { type, data } of events) {
    if (type === 'step.started') {
      open(data);
      continue;
    }
    const step = latest.get(`${num(data.depth)}/${num(data.pass, 1)}/${str(data.step) ?? ''}`) ?? open(data);
    const prompt = str(data.prompt_excerpt) ?? '';
    const failed = type === 'node.failed';
    step.nodes.push({
      node: num(data.node, step.nodes.length + 1),
      prompt,
      prompt_chars: num(data.prompt_chars, prompt.length),
      output: str(data.output_excerpt) ?? '',
      usage: usageOf(data.usage),
      cost_usd: num(data.cost_usd),
      provider: str(data.provider),
      latency_ms: num(data.latency_ms),
      survived: failed ? false : typeof data.survived === 'boolean' ? data.survived : null,
      error: failed ? (str(data.error) ?? 'The call failed.') : null,
      reused: data.reused === true,
      saved_usd: num(data.saved_usd),
    });
  }
  return steps;
}
