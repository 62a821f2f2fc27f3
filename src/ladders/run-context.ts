// The bookkeeping of one run: every model call goes through here to be budgeted, capped,
// timed, charged and traced, and the first failure halts everything still in flight.
import { abortScope } from '../abort-scope.js';
import { ApiError, internalError } from '../errors.js';
import type { Usage } from '../providers/types.js';
import { budgetExceeded, runCancelled, runLimitExceeded, runTimeout, stepFailed } from './limits.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, RunBudget, isReservation } from './budget.js';
import { costOf, defaultPriceTable, priceOf, type PriceTable } from './pricing.js';
import { LadderRunError, TRACE_PROMPT_CHARS, type NodeTrace, type RunOptions, type RunProgress, type StepTrace } from './run-types.js';

const noUsage = (): Usage => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

export class RunContext {
  readonly trace: StepTrace[] = [];
  private readonly usage = noUsage();
  private modelCalls = 0;
  private readonly controller = new AbortController();
  private fatal: ApiError | null = null;
  private readonly prices: PriceTable;
  private readonly budget: RunBudget;
  private readonly timer: NodeJS.Timeout;
  private readonly onCallerAbort = () => this.halt(callerAbortError(this.options.signal?.reason));

  constructor(private readonly options: RunOptions) {
    this.prices = options.prices ?? defaultPriceTable;
    this.budget = new RunBudget({
      maxSpendUsd: options.limits.maxSpendUsd,
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
    const step: StepTrace = { ...entry, nodes: [] };
    this.trace.push(step);
    return step;
  }

  /** Makes one node's model call and returns its output. */
  async callNode(step: StepTrace, node: number, prompt: string): Promise<string> {
    this.throwIfHalted();
    const { limits, model } = this.options;
    if (this.modelCalls >= limits.maxModelCallsPerRun) {
      throw this.halt(runLimitExceeded(`The run reached the platform's limit of ${limits.maxModelCallsPerRun} model calls.`));
    }
    // The call's worst case is reserved before it starts and its max_tokens capped to match,
    // so calls in flight together cannot overrun the budget (see budget.ts).
    const reservation = this.budget.reserve(prompt);
    if (!isReservation(reservation)) throw this.halt(budgetExceeded(reservation, limits.maxSpendUsd, step.stepId));
    this.modelCalls += 1;
    let costUsd = 0;
    const started = performance.now();
    const base = { node, prompt: prompt.slice(0, TRACE_PROMPT_CHARS), promptChars: prompt.length };
    // Each call gets its own scope under the run's signal, so the run's signal carries one
    // listener however many calls are in flight (see abort-scope.ts).
    const scope = abortScope(this.controller.signal);
    try {
      const signal = scope.signal;
      const request = { model, messages: [{ role: 'user' as const, content: prompt }], max_tokens: reservation.maxTokens };
      const result = await untilAborted(this.options.call(request, signal), signal);
      costUsd = costOf(model, result.usage, this.prices);
      this.usage.prompt_tokens += result.usage.prompt_tokens;
      this.usage.completion_tokens += result.usage.completion_tokens;
      this.usage.total_tokens += result.usage.total_tokens;
      const latencyMs = Math.round(performance.now() - started);
      addNode(step, { ...base, output: result.content, survived: true, usage: result.usage, costUsd, provider: result.provider, latencyMs });
      return result.content;
    } catch (error) {
      const latencyMs = Math.round(performance.now() - started);
      const message = this.fatal
        ? `Aborted: ${this.fatal.message}`
        : error instanceof Error ? error.message : String(error);
      const failure = this.fatal ?? stepFailed(step.stepId, error);
      addNode(step, { ...base, output: '', survived: false, usage: noUsage(), costUsd: 0, provider: null, latencyMs, error: message });
      throw this.halt(failure);
    } finally {
      scope.dispose();
      this.budget.settle(reservation, costUsd);
    }
  }

  progress(): RunProgress {
    return { usage: { ...this.usage }, spendUsd: this.budget.spentUsd, modelCalls: this.modelCalls, trace: this.trace };
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
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
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
