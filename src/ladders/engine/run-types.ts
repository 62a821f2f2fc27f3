// What a ladder run takes and gives back, including the trace the caller stores.
import { ApiError } from '../../errors.js';
import type { PriceTable } from '../../pricing/prices.js';
import type { DeltaSink, ModelCall, Usage } from '../../providers/types.js';
import type { LadderConfig } from '../language/config.js';

/** Platform caps on one run; the caller fills them from its configuration. */
export interface RunLimits {
  maxNodesPerStep: number;
  maxModelCallsPerRun: number;
  maxRecursionDepth: number;
  maxRunMs: number;
  /** Model calls in flight at once within one normal step, or across one group's children. */
  maxConcurrentCalls: number;
  /** The effective budget in nanos: the config's executionBudget.maxSpend or the platform default. */
  maxSpendNanos: number;
  /** Cap on one call's max_tokens; the budget may lower it further. Default 4096. */
  maxOutputTokens?: number;
  /** Output text (UTF-8 bytes) the run may hold in memory at once. Default DEFAULT_MAX_RUN_BYTES. */
  maxRunBytes?: number;
}

export const DEFAULT_MAX_RUN_BYTES = 32 * 1024 * 1024;

/** A finished model call as a checkpoint keeps it: enough to replay it without the vendor. */
export interface RecordedCall {
  output: string;
  usage: Usage;
  costNanos: number;
  provider: string | null;
  latencyMs: number;
  /** Set when the call reused a source run's recorded call instead of calling the vendor (see reuse.ts). */
  reused?: ReuseMark;
}

/** Which recorded call of the source run a reused call took, and the cost that spared. */
export interface ReuseMark {
  from: string;
  savedNanos: number;
}

/** How many of a rerun's calls were reused, and the spend they spared. */
export interface ReuseTotals {
  calls: number;
  savedNanos: number;
}

/** One step execution's place in a run. */
export interface StepPlace {
  stepId: string;
  pass: number;
  depth: number;
  groupId?: string;
}

/** One node's place in a run; `key` names it stably across attempts (see src/worker/call-keys.ts). */
export interface NodePlace extends StepPlace {
  node: number;
  key: string;
}

/** What the journal learns of a finished call besides the call itself. */
export interface CallDetail {
  prompt: string;
  /** promptHash(model, prompt): what a later rerun matches this call by (none: never reused). */
  promptHash?: string;
  survived: boolean;
  progress: RunProgress;
}

/**
 * Where a run records itself as it goes (the background worker's checkpoints and events).
 * Every member is optional; the interpreter works the same without any.
 */
export interface RunJournal {
  /** A call an earlier attempt of this run finished: replayed, never made again. */
  recorded?(key: string): Promise<RecordedCall | undefined>;
  /** Runs after each call made, before the run uses its output; a rejection halts the run with its error. */
  callCompleted?(place: NodePlace, call: RecordedCall, detail: CallDetail): Promise<void>;
  /**
   * Before each model call is made (not a replayed or reused one): a promise holds the call until
   * it settles (a background run's checkpoints stored), and a rejection halts the run with its error.
   */
  beforeCall?(): Promise<void> | undefined;
  callFailed?(place: NodePlace, detail: { prompt: string; error: string; latencyMs: number }): void;
  stepStarted?(place: StepPlace): void;
  stepCompleted?(place: StepPlace, survivors: number[]): void;
}

export interface RunOptions {
  config: LadderConfig;
  /** The model every call of the run uses. */
  model: string;
  /** The ladder's `input.context`: the request's last user message. */
  input: string;
  /** Effective knob values, as resolveKnobs returns them. */
  knobs: Record<string, number>;
  call: ModelCall;
  limits: RunLimits;
  signal?: AbortSignal;
  /** Default: defaultPriceTable. */
  prices?: PriceTable;
  /** Checkpoints and events; none by default. */
  journal?: RunJournal;
  /**
   * Given to the one call whose output is the run's answer as made, when there is one: the exit
   * step's call in the last pass, a step of one node without a gate and with no recursion left
   * to replace its output (see answerSink in interpreter.ts). That call streams its text here
   * as it arrives; it is otherwise made, checkpointed and traced as every other call.
   */
  onAnswerDelta?: DeltaSink;
  /** A rerun's source calls, reused instead of identical vendor calls; none by default. */
  reuse?: ReusableCalls;
  /** Spans for steps and nodes (src/telemetry/); none by default. */
  tracer?: RunTracer;
}

/** Wraps each step and each node's call in a span: `work` runs inside it and its outcome ends it. */
export interface RunTracer {
  step<T>(place: StepPlace, work: () => Promise<T>): Promise<T>;
  node<T>(place: NodePlace, work: () => Promise<T>): Promise<T>;
}

/** A source run's recorded calls as a rerun finds them by model and whole prompt (see reuse.ts). */
export interface ReusableCalls {
  /**
   * Takes a source call recorded with this prompt hash, preferring the one at the same call key,
   * so each source call is reused at most once. The take itself is synchronous (calls in flight
   * together never take the same one); the output is read after. Undefined: none left.
   */
  take(hash: string, key: string): Promise<RecordedCall | undefined> | undefined;
}

/** Prompts are kept in the trace up to this many characters, to bound what is stored. */
export const TRACE_PROMPT_CHARS = 4000;
/** Outputs likewise; `outputChars` gives the full length. */
export const TRACE_OUTPUT_CHARS = 4000;

export interface NodeTrace {
  /** 1-based. */
  node: number;
  /** The prompt sent, cut to TRACE_PROMPT_CHARS. */
  prompt: string;
  /** The full prompt's length, so a cut prompt is recognisable. */
  promptChars: number;
  /** The output, cut to TRACE_OUTPUT_CHARS. */
  output: string;
  outputChars: number;
  /** False when the step's gate pruned the node, or its call failed. */
  survived: boolean;
  usage: Usage;
  costNanos: number;
  /** The provider that answered; null when the call failed. */
  provider: string | null;
  latencyMs: number;
  error?: string;
  /** True when the call reused the source run's recorded output (a rerun), at no cost. */
  reused?: true;
  /** On a reused call: what the source run paid for it. */
  savedNanos?: number;
}

/** One execution of one step: a pass of a run at a recursion depth. */
export interface StepTrace {
  /** 1-based pass of the run at this depth; a recursion child has a single pass. */
  pass: number;
  /** 0 for the root run, n for the n-th nested recursion child. */
  depth: number;
  stepId: string;
  /** Set on the children of a group step. */
  groupId?: string;
  /** In node order; a node whose call was never made has no entry. */
  nodes: NodeTrace[];
  /**
   * On a recursion step that recursed: the answer of its child run (depth + 1, its exit step's
   * value) that replaced the step's output (cut to TRACE_OUTPUT_CHARS).
   */
  recursionAnswer?: string;
}

export interface RunResult {
  answer: string;
  /** Summed over every model call of the run, recursion children included. */
  usage: Usage;
  spendNanos: number;
  modelCalls: number;
  trace: StepTrace[];
  /** Only on a run that reused calls: model calls and usage count them, spend does not. */
  reused?: ReuseTotals;
}

export type RunProgress = Omit<RunResult, 'answer'>;

/**
 * Every failure of runLadder is one of these. It keeps the status, type, code, message and
 * param of the ApiError that ended the run (so a router's own 4xx reaches the client
 * unchanged), and adds what the run had used and done, for the caller to bill and store.
 */
export class LadderRunError extends ApiError {
  readonly usage: Usage;
  readonly spendNanos: number;
  readonly modelCalls: number;
  readonly reused?: ReuseTotals;
  declare readonly trace: StepTrace[];

  constructor(error: ApiError, progress: RunProgress) {
    super(error.statusCode, error.type, error.code, error.message, error.param, error.headers);
    this.cause = error;
    this.usage = progress.usage;
    this.spendNanos = progress.spendNanos;
    this.modelCalls = progress.modelCalls;
    if (progress.reused) this.reused = progress.reused;
    // Not enumerable, so that no logger's error serializer ever writes a trace out.
    Object.defineProperty(this, 'trace', { value: progress.trace, enumerable: false });
  }
}
