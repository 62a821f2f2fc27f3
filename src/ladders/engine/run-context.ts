// The bookkeeping of one run: every model call goes through here to be budgeted, capped,
// timed, charged and traced, and the first failure halts everything still in flight.
import { abortScope, forget, whenAborted, type CallerSignal } from '../../abort-scope.js';
import { ApiError, internalError } from '../../errors.js';
import { costOf, defaultPriceTable, priceOf, type PriceTable } from '../../pricing/prices.js';
import type { DeltaSink, Usage } from '../../providers/types.js';
import { budgetExceeded, runCancelled, runLimitExceeded, runOutputLimitExceeded, runTimeout, stepFailed } from './limits.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, RunBudget, isReservation } from './budget.js';
import type { MemoryMeter } from './memory.js';
import { promptHash } from './reuse.js';
import {
  DEFAULT_MAX_RUN_BYTES,
  LadderRunError,
  TRACE_OUTPUT_CHARS,
  TRACE_PROMPT_CHARS,
  type NodePlace,
  type NodeTrace,
  type RecordedCall,
  type ReuseTotals,
  type RunOptions,
  type RunProgress,
  type StepTrace,
} from './run-types.js';

const noUsage = (): Usage => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

export class RunContext implements MemoryMeter {
  readonly trace: StepTrace[] = [];
  /** Output bytes the run holds now, against limits.maxRunBytes. */
  private heldBytes = 0;
  private readonly usage = noUsage();
  private modelCalls = 0;
  private readonly reused: ReuseTotals = { calls: 0, savedNanos: 0 };
  private readonly controller = new AbortController();
  private fatal: ApiError | null = null;
  private readonly prices: PriceTable;
  private readonly budget: RunBudget;
  private readonly timer: NodeJS.Timeout;
  private readonly onCallerAbort = () => this.halt(callerAbortError(this.options.signal?.reason));

  constructor(private readonly options: RunOptions) {
    this.prices = options.prices ?? defaultPriceTable;
    this.budget = new RunBudget({
      maxSpendNanos: options.limits.maxSpendNanos,
      maxConcurrentCalls: options.limits.maxConcurrentCalls,
      maxOutputTokens: options.limits.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
      price: priceOf(options.model, this.prices),
    });
    this.timer = setTimeout(() => this.halt(runTimeout(options.limits.maxRunMs)), options.limits.maxRunMs);
    if (options.signal?.aborted) this.onCallerAbort();
    else options.signal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  /** Records the run's first failure and aborts every call still in flight. */
  halt(error: ApiError): ApiError {
    if (!this.fatal) {
      this.fatal = error;
      this.controller.abort(error);
    }
    return this.fatal;
  }

  throwIfHalted(): void {
    if (this.fatal) throw this.fatal;
  }

  /** The error that ended the run when a step saw several failures at once. */
  failure(fallback: unknown): unknown {
    return this.fatal ?? fallback;
  }

  openStep(entry: Omit<StepTrace, 'nodes'>): StepTrace {
    const step: StepTrace = Object.assign({}, entry, { nodes: [] });
    this.trace.push(step);
    return step;
  }

  hold(bytes: number): void {
    this.heldBytes += bytes;
    const max = this.options.limits.maxRunBytes ?? DEFAULT_MAX_RUN_BYTES;
    if (this.heldBytes > max) throw this.halt(runOutputLimitExceeded(max));
  }

  release(bytes: number): void {
    this.heldBytes -= bytes;
  }

  /**
   * Makes one node's model call and returns its output; a call an earlier attempt of the run
   * recorded is replayed instead, and in a rerun an identical call of the source run is reused.
   * `gate` is the step's continueIf, for the journal; `onDelta` streams the call's text as it
   * arrives (the run's answer, RunOptions.onAnswerDelta).
   */
  async callNode(step: StepTrace, place: NodePlace, prompt: string, gate?: string, onDelta?: DeltaSink): Promise<string> {
    this.throwIfHalted();
    const { node } = place;
    const journal = this.options.journal;
    const recorded = await journal?.recorded?.(place.key);
    this.throwIfHalted();
    if (recorded) return this.replay(step, place, prompt, recorded);
    const { limits, model } = this.options;
    const hash = promptHash(model, prompt);
    // The run's own checkpoints come first (above); only then a source call, taken for good.
    const reused = await this.options.reuse?.take(hash, place.key);
    this.throwIfHalted();
    if (this.modelCalls >= limits.maxModelCallsPerRun) {
      throw this.halt(runLimitExceeded(`The run reached the platform's limit of ${limits.maxModelCallsPerRun} model calls.`));
    }
    if (reused) return this.reuse(step, place, prompt, hash, gate, reused);
    const held = journal?.beforeCall?.();
    if (held) {
      try {
        await held;
      } catch (error) {
        throw this.halt(error instanceof ApiError ? error : internalError());
      }
      this.throwIfHalted();
    }
    // The call's worst case is reserved before it starts and its max_tokens capped to match,
    // so calls in flight together cannot overrun the budget (see budget.ts).
    const reservation = this.budget.reserve(prompt);
    if (!isReservation(reservation)) throw this.halt(budgetExceeded(reservation, limits.maxSpendNanos, step.stepId));
    this.modelCalls += 1;
    let costNanos = 0;
    const started = performance.now();
    const base = { node, prompt: prompt.slice(0, TRACE_PROMPT_CHARS), promptChars: prompt.length };
    // Each call gets its own scope under the run's signal, so the run's signal carries one
    // listener however many calls are in flight (see abort-scope.ts).
    const scope = abortScope(this.controller.signal);
    let call: RecordedCall;
    try {
      const request = { model, messages: [{ role: 'user' as const, content: prompt }], max_tokens: reservation.maxTokens };
      const result = await untilAborted(this.options.call(request, scope.signal, onDelta), scope.signal);
      costNanos = costOf(model, result.usage, this.prices);
      call = { output: result.content, usage: result.usage, costNanos, provider: result.provider, latencyMs: Math.round(performance.now() - started) };
    } catch (error) {
      const latencyMs = Math.round(performance.now() - started);
      const message = this.fatal
        ? `Aborted: ${this.fatal.message}`
        : error instanceof Error ? error.message : String(error);
      const failure = this.fatal ?? stepFailed(step.stepId, error);
      addNode(step, { ...base, output: '', outputChars: 0, survived: false, usage: noUsage(), costNanos: 0, provider: null, latencyMs, error: message });
      journal?.callFailed?.(place, { prompt, error: message, latencyMs });
      throw this.halt(failure);
    } finally {
      scope.dispose();
      this.budget.settle(reservation, costNanos);
    }
    // Counted before anything else can fail: the call was made and is paid for.
    this.count(step, node, base, call);
    await this.record(place, call, prompt, hash, gate);
    return call.output;
  }

  /**
   * A source call reused: its output and usage as recorded, at no cost and no vendor call. It is
   * checkpointed like a call made, so a resumed run replays it rather than reusing again.
   */
  private async reuse(step: StepTrace, place: NodePlace, prompt: string, hash: string, gate: string | undefined, source: RecordedCall): Promise<string> {
    this.modelCalls += 1;
    const call: RecordedCall = { ...source, costNanos: 0, latencyMs: 0 };
    this.count(step, place.node, { node: place.node, prompt: prompt.slice(0, TRACE_PROMPT_CHARS), promptChars: prompt.length }, call);
    await this.record(place, call, prompt, hash, gate);
    return call.output;
  }

  /** Hands a finished call's checkpoint and event to the journal, before the run uses its output. */
  private async record(place: NodePlace, call: RecordedCall, prompt: string, hash: string, gate: string | undefined): Promise<void> {
    const journal = this.options.journal;
    if (!journal?.callCompleted) return;
    const survived = gate === undefined || call.output.trim() === gate;
    try {
      await journal.callCompleted(place, call, { prompt, promptHash: hash, survived, progress: this.progress() });
    } catch (error) {
      throw this.halt(error instanceof ApiError ? error : internalError());
    }
  }

  /** A recorded call counts as made: its usage and cost once, its output as if just received. */
  private replay(step: StepTrace, place: NodePlace, prompt: string, call: RecordedCall): string {
    this.modelCalls += 1;
    this.budget.charge(call.costNanos);
    const base = { node: place.node, prompt: prompt.slice(0, TRACE_PROMPT_CHARS), promptChars: prompt.length };
    this.count(step, place.node, base, call);
    return call.output;
  }

  private count(step: StepTrace, node: number, base: Pick<NodeTrace, 'node' | 'prompt' | 'promptChars'>, call: RecordedCall): void {
    this.usage.prompt_tokens += call.usage.prompt_tokens;
    this.usage.completion_tokens += call.usage.completion_tokens;
    this.usage.total_tokens += call.usage.total_tokens;
    if (call.reused) {
      this.reused.calls += 1;
      this.reused.savedNanos += call.reused.savedNanos;
    }
    // Every member spelt out: `{ ...base, more }` takes a slow path in Node 20's V8 (4 µs a call here).
    const trace: NodeTrace = {
      node: base.node,
      prompt: base.prompt,
      promptChars: base.promptChars,
      output: call.output.slice(0, TRACE_OUTPUT_CHARS),
      outputChars: call.output.length,
      survived: true,
      usage: call.usage,
      costNanos: call.costNanos,
      provider: call.provider,
      latencyMs: call.latencyMs,
    };
    if (call.reused) {
      trace.reused = true;
      trace.savedNanos = call.reused.savedNanos;
    }
    addNode(step, trace);
    // Held until the step stores its survivors (see RunMemory), so a flood stops at once.
    this.hold(Buffer.byteLength(call.output));
  }

  progress(): RunProgress {
    const progress: RunProgress = { usage: { ...this.usage }, spendNanos: this.budget.spentNanos, modelCalls: this.modelCalls, trace: this.trace };
    if (this.reused.calls > 0) progress.reused = { ...this.reused };
    return progress;
  }

  /** Whatever ended the run, as a LadderRunError carrying what the run used. */
  toRunError(error: unknown): LadderRunError {
    if (error instanceof LadderRunError) return error;
    const apiError = error instanceof ApiError ? error : internalError();
    const runError = new LadderRunError(apiError, this.progress());
    if (!(error instanceof ApiError)) runError.cause = error;
    return runError;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.options.signal?.removeEventListener('abort', this.onCallerAbort);
  }
}

function callerAbortError(reason: unknown): ApiError {
  return reason instanceof ApiError ? reason : runCancelled();
}

// A call that ignores its signal must still not hold the run past its wall time.
function untilAborted<T>(promise: Promise<T>, signal: CallerSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (reason: unknown) => reject(reason);
    whenAborted(signal, onAbort);
    promise.then(
      (value) => {
        forget(signal, onAbort);
        resolve(value);
      },
      (error: unknown) => {
        forget(signal, onAbort);
        reject(error);
      },
    );
  });
}

function addNode(step: StepTrace, node: NodeTrace): void {
  const at = step.nodes.findIndex((n) => n.node > node.node);
  if (at === -1) step.nodes.push(node);
  else step.nodes.splice(at, 0, node);
}
