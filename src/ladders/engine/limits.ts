// The ways a run can fail, and the platform caps checked before a run makes any call.
import { formatUsd, NANOS_PER_USD, usdDecimal } from '../../money.js';
import { ApiError, LimitError } from '../../errors.js';
import type { LadderConfig, ModelStep } from '../language/config.js';
import { parseKnobReference } from '../language/knob-reference.js';
import { maxDepthOf, nodeCount, passCount } from './knobs.js';
import type { RunLimits } from './run-types.js';

/** A cap of the platform stops the run; the request or the ladder asked for too much. */
export const runLimitExceeded = (message: string) =>
  new ApiError(422, 'execution_error', 'run_limit_exceeded', message);

export const runOutputLimitExceeded = (maxBytes: number) =>
  new ApiError(
    422,
    'execution_error',
    'run_output_limit_exceeded',
    `The run's outputs grew past the platform's limit of ${formatBytes(maxBytes)} held at once; use fewer or shorter outputs.`,
  );

export const runTimeout = (maxRunMs: number) =>
  new ApiError(504, 'execution_error', 'run_timeout', `The run exceeded its wall-time limit of ${formatMs(maxRunMs)} and was stopped.`);

// 499, "client closed request": the caller stopped waiting, so nobody is there to read it.
export const runCancelled = () =>
  new ApiError(499, 'execution_error', 'run_cancelled', 'The run was cancelled before it finished.');

export function budgetExceeded(shortfall: { spentNanos: number; reservedNanos: number; neededNanos: number }, maxSpendNanos: number, stepId: string): ApiError {
  const inFlight = shortfall.reservedNanos > 0 ? ` (and ${formatUsd(shortfall.reservedNanos)} is reserved for calls in flight)` : '';
  return new ApiError(
    402,
    'insufficient_quota',
    'execution_budget_exceeded',
    `Execution budget exceeded: spent ${formatUsd(shortfall.spentNanos)} of the $${formatBudget(maxSpendNanos)} maximum${inFlight}; ` +
      `the next call of step "${stepId}" may cost up to ${formatUsd(shortfall.neededNanos)}, more than remains.`,
  );
}

// A router's error that is the request's own fault (say, a model no connection supports) would
// fail the same way on retry, so it reaches the client unchanged; anything else is the step's.
const REQUEST_FAULT_STATUSES = new Set([400, 404, 413, 422]);

export function stepFailed(stepId: string, error: unknown): ApiError {
  if (error instanceof ApiError && REQUEST_FAULT_STATUSES.has(error.statusCode)) return error;
  // The caller's own rate limit or spend quota (docs/quotas.md) ends the run as itself: 429 or 402.
  if (error instanceof LimitError) return error;
  const reason = (error instanceof Error ? error.message : String(error)).trim().replace(/\.+$/, '');
  return new ApiError(502, 'execution_error', 'step_failed', `Step "${stepId}" failed: ${reason || 'unknown error'}.`);
}

export function modelSteps(config: LadderConfig): ModelStep[] {
  return config.steps.flatMap((step) => (step.type === 'group' ? step.steps : [step]));
}

/**
 * Nodes, recursion depth and the run's number of calls follow from the config and the knobs
 * alone (gates prune outputs, not calls), so a run that would break a cap fails here, before
 * it spends anything, rather than halfway. Nodes above the cap fail rather than being clamped:
 * quietly running fewer nodes than the ladder asks for would change its answer unannounced.
 */
export function checkRunLimits(config: LadderConfig, knobs: Record<string, number>, limits: RunLimits): void {
  let callsPerPass = 0;
  let maxDepth = 0;
  for (const step of modelSteps(config)) {
    const nodes = nodeCount(step, knobs, config);
    if (nodes > limits.maxNodesPerStep) {
      throw runLimitExceeded(
        `Step "${step.id}" has ${nodes} nodes${viaKnob(step.nodes)}; the platform allows at most ${limits.maxNodesPerStep} per step.`,
      );
    }
    callsPerPass += nodes;
    if (!step.recursion) continue;
    maxDepth = maxDepthOf(step.recursion, knobs, config);
    if (maxDepth > limits.maxRecursionDepth) {
      throw runLimitExceeded(
        `Step "${step.id}" recurses to depth ${maxDepth}${viaKnob(step.recursion.maxDepth)}; the platform allows at most ${limits.maxRecursionDepth}.`,
      );
    }
  }
  // Each recursion child runs one pass and, but for the deepest, spawns one child of its own.
  const calls = passCount(config, knobs) * callsPerPass * (maxDepth + 1);
  if (calls > limits.maxModelCallsPerRun) {
    throw runLimitExceeded(
      `This run needs ${calls} model calls; the platform allows at most ${limits.maxModelCallsPerRun} per run.`,
    );
  }
}

const viaKnob = (value: unknown): string => {
  const id = parseKnobReference(value);
  return id === null ? '' : ` (knob "${id}")`;
};

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** The budget as its config wrote it: `0.50` for whole cents, else every decimal it has (`0.00008`). */
function formatBudget(nanos: number): string {
  return nanos % 10_000_000 === 0 ? (nanos / NANOS_PER_USD).toFixed(2) : usdDecimal(nanos).replace(/0+$/, '');
}

/**
 * How many step executions and model calls a run makes in full (gates prune outputs, not
 * calls): its passes times one pass at depth 0, where each recursion step below its maxDepth
 * adds a one-pass child run one level deeper. For progress (steps_total).
 */
export function runSize(config: LadderConfig, knobs: Record<string, number>): { steps: number; calls: number } {
  const steps = modelSteps(config);
  const perDepth = new Map<number, { steps: number; calls: number }>();
  const pass = (depth: number): { steps: number; calls: number } => {
    const known = perDepth.get(depth);
    if (known) return known;
    const size = { steps: 0, calls: 0 };
    for (const step of steps) {
      size.steps += 1;
      size.calls += nodeCount(step, knobs, config);
      if (step.recursion && depth < maxDepthOf(step.recursion, knobs, config)) {
        const child = pass(depth + 1);
        size.steps += child.steps;
        size.calls += child.calls;
      }
    }
    perDepth.set(depth, size);
    return size;
  };
  const passes = passCount(config, knobs);
  const one = pass(0);
  return { steps: passes * one.steps, calls: passes * one.calls };
}
