// Running an instance this process holds, synchronous or background: its lease watched, its
// calls checkpointed, its events written, resumed from the checkpoints of an earlier attempt,
// and its outcome recorded once, unless the run was lost or handed back on the way.
import type { CallerSignal } from '../abort-scope.js';
import type { Database } from '../db/client.js';
import { ApiError, internalError } from '../errors.js';
import type { LadderConfig } from '../ladders/language/config.js';
import { LadderRunError, runLadder, type RunResult, type RunTracer } from '../ladders/engine/interpreter.js';
import { runSize } from '../ladders/engine/limits.js';
import type { PriceTable } from '../pricing/prices.js';
import type { RunLimits } from '../ladders/engine/run-types.js';
import type { RouterLogger } from '../providers/router.js';
import type { ChatRequest, ChatResult, DeltaSink, ModelCall, ProviderConnection } from '../providers/types.js';
import { lastEventSeq, loadRecordedCalls, type RecordedCalls } from './checkpoints.js';
import { loadReusableCalls, withReuseMarks } from './reuse.js';
import { isReleased, leaseLost } from './errors.js';
import { InstanceJournal, type HeldRun } from './journal.js';
import type { LeaseKeeper, RunKind } from './lease.js';

export interface RunExecutorDeps {
  database: Pick<Database, 'query' | 'queryRelaxed'>;
  leases: LeaseKeeper;
  route: (request: ChatRequest, connections: ProviderConnection[], signal?: CallerSignal, log?: RouterLogger) => Promise<ChatResult>;
  /** The same call streamed, its text handed to `onDelta` as it arrives (the answer of a streamed synchronous run). */
  relay?: (request: ChatRequest, connections: ProviderConnection[], onDelta: DeltaSink, signal?: CallerSignal, log?: RouterLogger) => Promise<ChatResult>;
  prices: PriceTable;
  /** A span per run, with its steps and nodes inside (src/telemetry/); none by default. */
  tracer?: RunSpans;
}

/** What a run's span says of it. */
export interface RunSpanInfo {
  instanceId: string;
  kind: RunKind;
  attempt: number;
  resumed: boolean;
  model: string;
  /** `author/slug`, when known. */
  ladder: string | null;
  input: string;
  /** W3C traceparent of the request that queued a background run: the run's span links to it. */
  traceParent: string | null;
}

export interface RunSpans {
  /** Runs `work` inside the run's span, given the tracer for its steps and nodes. */
  run(info: RunSpanInfo, work: (tracer: RunTracer) => Promise<RunResult>): Promise<RunResult>;
}

export interface HeldInstance extends HeldRun {
  kind: RunKind;
  attempts: number;
  /** Started before: load its checkpoints and go on from its last event. */
  resumed: boolean;
  cancelRequested: boolean;
  /** When the statement that took its lease was sent (performance.now()); by default, when it starts here. */
  leasedAt?: number;
}

export interface ExecuteArgs {
  held: HeldInstance;
  config: LadderConfig;
  model: string;
  input: string;
  knobs: Record<string, number>;
  /** A rerun's source instance: identical calls reuse its recorded ones (src/worker/reuse.ts). */
  rerunOf?: string | null;
  connections: ProviderConnection[];
  limits: RunLimits;
  /** The caller's own abort (a synchronous request's client going away). */
  signal?: AbortSignal;
  log?: RouterLogger;
  /** Wraps each model call of the run (quotas and the usage ledger: src/usage/metering.ts). */
  meter?: (call: ModelCall) => ModelCall;
  /** A streamed synchronous run: where its answer's last call relays its text (RunOptions.onAnswerDelta). */
  onAnswerDelta?: DeltaSink;
  /** `author/slug`, for the run's span. */
  ladder?: string;
  /** The queuing request's W3C traceparent, for the run's span to link to. */
  traceParent?: string | null;
}

/** How a held run ended here. */
export type Execution =
  /** `finishedAt`: the recorded finish (now, if the row was taken over just as the run ended). */
  | { outcome: 'finished'; result: RunResult; finishedAt: Date }
  | { outcome: 'failed'; error: LadderRunError }
  /** Lost to another process, or handed back at shutdown: its outcome is not this process's to write. */
  | { outcome: 'abandoned'; error: LadderRunError; released: boolean };

export function stepsTotal(config: LadderConfig, knobs: Record<string, number>): number {
  return runSize(config, knobs).steps;
}

export function createRunExecutor(deps: RunExecutorDeps) {
  return {
    /** A run that cannot start (its ladder is gone, its model no longer allowed) fails with `error`. */
    async failBeforeStart(held: HeldInstance, error: ApiError): Promise<void> {
      const lastSeq = held.resumed ? await lastEventSeq(deps.database, held.id) : 0;
      const journal = new InstanceJournal(deps.database, held, { lastSeq, recorded: null, stepsTotal: 0, onLost: () => {} });
      await journal.finish({ status: 'failed', error, progress: emptyProgress() }, []);
      journal.close();
    },

    async execute(args: ExecuteArgs): Promise<Execution> {
      const { held, config } = args;
      const meter = args.meter ?? ((call: ModelCall) => call);
      const controller = new AbortController();
      const untrack = deps.leases.track(held, held.kind, controller, held.leasedAt);
      const signal = args.signal ? AbortSignal.any([args.signal, controller.signal]) : controller.signal;
      let journal: InstanceJournal | null = null;
      try {
        const [loaded, lastSeq] = held.resumed
          ? await Promise.all([loadRecordedCalls(deps.database, held.id), lastEventSeq(deps.database, held.id)])
          : [null, 0];
        const rerun = args.rerunOf ? await loadRerun(deps.database, held.id, loaded) : null;
        const recorded = rerun?.recorded ?? loaded;
        journal = new InstanceJournal(deps.database, held, {
          lastSeq,
          recorded,
          stepsTotal: stepsTotal(config, args.knobs),
          onLost: () => controller.abort(leaseLost()),
          pipelined: held.kind === 'sync',
          surelyHeld: () => deps.leases.surelyHeld(held.id),
        });
        journal.event('instance.started', {
          attempt: held.attempts,
          resumed: held.resumed,
          recorded_calls: recorded?.size ?? 0,
          ...(args.rerunOf ? { rerun_of: args.rerunOf, reusable_calls: rerun?.reuse?.size ?? 0 } : {}),
        });
        if (held.cancelRequested) controller.abort(new ApiError(499, 'execution_error', 'run_cancelled', 'The run was cancelled before it finished.'));
        const runJournal = journal;
        const run = (tracer?: RunTracer) => runLadder({
          config,
          model: args.model,
          input: args.input,
          knobs: args.knobs,
          call: meter((request, callSignal, onDelta) =>
            onDelta && deps.relay
              ? deps.relay(request, args.connections, onDelta, callSignal, args.log)
              : deps.route(request, args.connections, callSignal, args.log)),
          limits: args.limits,
          prices: deps.prices,
          signal,
          journal: runJournal,
          ...(args.onAnswerDelta ? { onAnswerDelta: args.onAnswerDelta } : {}),
          ...(rerun?.reuse ? { reuse: rerun.reuse } : {}),
          ...(tracer ? { tracer } : {}),
        });
        const result = await (deps.tracer ? deps.tracer.run(spanInfo(args), run) : run());
        // A run's last checkpoints go with its outcome, in its statement. When that found the run
        // no longer ours, the run is not answered as finished: a synchronous one was failed as
        // run_interrupted by whoever took it; a background one is replayed by its new holder.
        const finishedAt = await journal.finish({ status: 'completed', answer: result.answer, progress: result }, result.trace);
        if (!finishedAt) return { outcome: 'abandoned', error: new LadderRunError(leaseLost(), result), released: false };
        return { outcome: 'finished', result, finishedAt };
      } catch (caught) {
        const error = caught instanceof LadderRunError ? caught : new LadderRunError(caught instanceof ApiError ? caught : internalError(), emptyProgress());
        if (!(caught instanceof ApiError)) error.cause = caught;
        if (!journal) return { outcome: 'abandoned', error, released: false };
        const reason: unknown = controller.signal.reason;
        if (controller.signal.aborted && isReleased(reason)) {
          return { outcome: 'abandoned', error, released: await journal.release() };
        }
        if (journal.lost || (controller.signal.aborted && reason instanceof ApiError && reason.code === 'run_interrupted')) {
          return { outcome: 'abandoned', error, released: false };
        }
        const status = error.code === 'run_cancelled' ? 'cancelled' : 'failed';
        await journal.finish({ status, error, progress: error }, error.trace);
        return { outcome: 'failed', error };
      } finally {
        journal?.close();
        untrack();
      }
    },
  };
}

export type RunExecutor = ReturnType<typeof createRunExecutor>;

/** A rerun's source calls to reuse, and (resumed) its own checkpoints with their reuse marks. */
async function loadRerun(database: Pick<Database, 'query'>, id: string, recorded: RecordedCalls | null) {
  const [reuse, marked] = await Promise.all([loadReusableCalls(database, id), recorded ? withReuseMarks(database, id, recorded) : null]);
  return { reuse, recorded: marked };
}

function spanInfo(args: ExecuteArgs): RunSpanInfo {
  const { held } = args;
  return { instanceId: held.id, kind: held.kind, attempt: held.attempts, resumed: held.resumed, model: args.model, ladder: args.ladder ?? null, input: args.input, traceParent: args.traceParent ?? null };
}

const emptyProgress = () => ({ usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, spendNanos: 0, modelCalls: 0, trace: [] });
