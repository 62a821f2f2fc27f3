// The background workers of one process: up to `concurrency` runs at once, claimed as soon as
// a pending notice arrives and, as a safety net, on a poll that also takes over runs whose
// process died and fails those that may not be resumed. On shutdown it stops claiming, lets
// its runs finish for a while, then hands the rest back as pending for another process.
import type { Database } from '../db/client.js';
import { ApiError, internalError } from '../errors.js';
import { nanosOf } from '../money.js';
import type { ModelCall } from '../providers/types.js';
import type { Metering } from '../usage/metering.js';
import type { PlatformLimits } from '../services/ladder-runs.js';
import { claimExpired, claimPending, finishInterrupted, type ClaimedInstance } from './claim.js';
import { runReleased } from './errors.js';
import type { RunExecutor } from './execute.js';
import type { LeaseKeeper } from './lease.js';
import type { RunLoader } from './load-run.js';

export interface WorkerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WorkerPoolOptions {
  database: Pick<Database, 'query'>;
  holder: string;
  concurrency: number;
  pollMs: number;
  leaseMs: number;
  maxAttempts: number;
  limits: PlatformLimits;
  executor: RunExecutor;
  leases: LeaseKeeper;
  loadRun: RunLoader;
  /** Quotas and the usage ledger: checked when a run starts, and around each model call. */
  metering?: Pick<Metering, 'checkRunStart' | 'ladderCall'>;
  /** Metrics (docs/metrics.md): busy workers, and each background run's outcome. */
  metrics?: { workerBusy(busy: number): void; runFinished(mode: 'async', status: 'completed' | 'failed' | 'cancelled'): void };
  /** Tells other processes a run was handed back. */
  notifyPending: () => Promise<void>;
  log: WorkerLogger;
}

// Claiming in small batches keeps one process from taking work that another idle one could start sooner.
const CLAIM_BATCH = 8;

export function createWorkerPool(options: WorkerPoolOptions) {
  const { database, concurrency, log } = options;
  const claim = { holder: options.holder, leaseMs: options.leaseMs, maxAttempts: options.maxAttempts };
  const active = new Set<Promise<void>>();
  let pollTimer: NodeJS.Timeout | null = null;
  let claiming: Promise<void> | null = null;
  let again = false;
  let stopping = false;

  const free = () => concurrency - active.size;

  function start(row: ClaimedInstance, leasedAt: number): void {
    const run = runOne(row, leasedAt).catch((error: unknown) => {
      log.error({ instance_id: row.id, err: { message: error instanceof Error ? error.message : String(error) } }, 'background run crashed');
    });
    const tracked = run.finally(() => {
      active.delete(tracked);
      options.metrics?.workerBusy(active.size);
      // A slot came free: more may be waiting.
      wake();
    });
    active.add(tracked);
    options.metrics?.workerBusy(active.size);
  }

  async function runOne(row: ClaimedInstance, leasedAt: number): Promise<void> {
    const started = Date.now();
    const held = { kind: 'async' as const, id: row.id, fence: row.fence, attempts: row.attempts, resumed: row.resumed, cancelRequested: row.cancelRequested, leasedAt };
    const subject = { accountId: row.accountId, username: row.username, apiKeyId: row.apiKeyId };
    let loaded;
    try {
      loaded = await options.loadRun(row);
      await options.metering?.checkRunStart(subject);
    } catch (error) {
      const apiError = error instanceof ApiError ? error : internalError();
      await options.executor.failBeforeStart(held, apiError);
      options.metrics?.runFinished('async', 'failed');
      log.info({ instance_id: row.id, status: 'failed', code: apiError.code }, 'background run could not start');
      return;
    }
    const { defaultMaxSpend, ...caps } = options.limits;
    const execution = await options.executor.execute({
      held,
      config: loaded.config,
      model: row.model,
      input: row.input,
      knobs: row.knobs,
      rerunOf: row.rerunOf,
      ladder: `${row.author}/${row.slug}`,
      traceParent: row.traceParent,
      connections: loaded.connections,
      limits: { ...caps, maxSpendNanos: nanosOf(loaded.config.executionBudget?.maxSpend ?? defaultMaxSpend) },
      ...(options.metering ? { meter: meterFor(options.metering, subject, row) } : {}),
    });
    // Never the trace or any output: the code and counts say what happened.
    const line = { instance_id: row.id, attempt: row.attempts, duration_ms: Date.now() - started };
    if (execution.outcome !== 'abandoned') {
      options.metrics?.runFinished('async', execution.outcome === 'finished' ? 'completed' : execution.error.code === 'run_cancelled' ? 'cancelled' : 'failed');
    }
    if (execution.outcome === 'finished') log.info({ ...line, status: 'completed', model_calls: execution.result.modelCalls }, 'background run finished');
    else if (execution.outcome === 'failed') {
      const status = execution.error.code === 'run_cancelled' ? 'cancelled' : 'failed';
      log.info({ ...line, status, code: execution.error.code, model_calls: execution.error.modelCalls }, 'background run finished');
    } else log.warn({ ...line, released: execution.released, code: execution.error.code }, execution.released ? 'background run handed back' : 'background run lost its lease');
  }

  async function claimLoop(): Promise<void> {
    do {
      again = false;
      while (!stopping && free() > 0) {
        const want = Math.min(free(), CLAIM_BATCH);
        const leasedAt = performance.now();
        const rows = await claimPending(database, claim, want);
        for (const row of rows) start(row, leasedAt);
        if (rows.length < want) break;
      }
    } while (again && !stopping && free() > 0);
  }

  /** Claims pending instances while there is room; safe to call any time, as often as notices come. */
  function wake(): void {
    if (stopping || concurrency <= 0) return;
    if (claiming) {
      again = true;
      return;
    }
    claiming = claimLoop()
      .catch((error: unknown) => log.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'claiming pending runs failed'))
      .finally(() => {
        claiming = null;
      });
  }

  /** The safety net: abandoned runs are failed or taken over, and pending ones claimed. */
  async function sweep(): Promise<void> {
    if (stopping) return;
    try {
      const failed = await finishInterrupted(database, options.maxAttempts, options.leases.heldIds());
      if (failed.length > 0) log.warn({ instances: failed }, 'runs interrupted: their processes stopped');
      if (free() > 0) {
        const leasedAt = performance.now();
        const rows = await claimExpired(database, claim, Math.min(free(), CLAIM_BATCH), options.leases.heldIds());
        for (const row of rows) start(row, leasedAt);
        if (rows.length > 0) log.info({ instances: rows.map((r) => r.id) }, 'took over runs whose process stopped');
      }
    } catch (error) {
      log.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'worker sweep failed');
    }
    wake();
  }

  return {
    start(): void {
      if (concurrency <= 0 || pollTimer) return;
      pollTimer = setInterval(() => void sweep(), options.pollMs);
      pollTimer.unref();
      void sweep();
    },

    wake,

    /** Runs the sweep now (tests). */
    sweep,

    get active(): number {
      return active.size;
    },

    /**
     * Stops claiming, waits up to `timeoutMs` for the runs under way, then hands the rest back
     * (pending, their attempt not counted) and tells the other processes.
     */
    async drain(timeoutMs: number): Promise<void> {
      stopping = true;
      if (pollTimer) clearInterval(pollTimer);
      pollTimer = null;
      await claiming;
      if (active.size === 0) return;
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        Promise.all(active).then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
      clearTimeout(timer);
      if (waited) return;
      const released = options.leases.abortAll(runReleased, 'async');
      await Promise.all(active);
      if (released > 0) await options.notifyPending().catch(() => {});
    },
  };
}

export type WorkerPool = ReturnType<typeof createWorkerPool>;

function meterFor(metering: Pick<Metering, 'ladderCall'>, subject: Parameters<Metering['checkRunStart']>[0], row: ClaimedInstance) {
  return (call: ModelCall) => metering.ladderCall({ subject, ladder: `${row.author}/${row.slug}`, instanceId: row.id }, call);
}
