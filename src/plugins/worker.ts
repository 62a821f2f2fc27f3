// The background workers of this process (WORKER_CONCURRENCY of them; 0 for an API-only
// process), the cancel notices that reach any run held here, and the retention job (followed,
// on the embedded database, by the vacuum it would otherwise never get: src/worker/vacuum.ts).
// How it all behaves: docs/background-runs.md.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { loggableError } from '../db/errors.js';
import { createRunLoader } from '../worker/load-run.js';
import { createWorkerPool, type WorkerPool } from '../worker/pool.js';
import { runRetention, type RetentionResult } from '../worker/retention.js';
import { vacuumDue, type VacuumOptions, type VacuumResult } from '../worker/vacuum.js';

declare module 'fastify' {
  interface FastifyInstance {
    workerPool: WorkerPool;
    /** One retention job now (as of `now`); the workers also run it every RETENTION_INTERVAL_MS. */
    runRetention(now?: Date): Promise<RetentionResult>;
    /** On the embedded database, vacuums and analyzes the tables due (after each retention job); null on PostgreSQL, whose autovacuum does it. */
    vacuumEmbedded(options?: VacuumOptions): Promise<VacuumResult | null>;
  }
}

// The first retention job waits a little, so that a fleet restarting at once spreads out.
const FIRST_RETENTION_DELAY_MS = 60_000;

async function workerPlugin(app: FastifyInstance) {
  const { worker, ladders, shutdownTimeoutMs } = app.config;
  const log = app.log.child({ component: 'worker' });
  const pool = createWorkerPool({
    database: app.database,
    holder: app.runHolder,
    concurrency: worker.concurrency,
    pollMs: worker.pollMs,
    leaseMs: worker.leaseMs,
    maxAttempts: worker.maxAttempts,
    limits: {
      defaultMaxSpend: ladders.defaultMaxSpend,
      maxNodesPerStep: ladders.maxNodesPerStep,
      maxModelCallsPerRun: ladders.maxModelCallsPerRun,
      maxRecursionDepth: ladders.maxRecursionDepth,
      maxRunMs: ladders.maxRunMs,
      maxConcurrentCalls: ladders.maxConcurrentCalls,
      maxRunBytes: ladders.maxRunBytes,
    },
    executor: app.runExecutor,
    leases: app.runLeases,
    loadRun: createRunLoader({ database: app.database, connections: app.connections }),
    metering: app.metering, // quotas: limits and the usage ledger for background runs too
    metrics: app.metrics,
    notifyPending: () => app.runNotices.pendingCreated(),
    log,
  });
  app.decorate('workerPool', pool);
  const periods = {
    instanceDays: worker.retentionDays,
    usageRawDays: app.config.usage.rawRetentionDays,
    responsesDays: worker.responsesRetentionDays,
    auditDays: app.config.auditRetentionDays,
  };
  app.decorate('runRetention', (now?: Date) => runRetention(app.database, periods, now));
  app.decorate('vacuumEmbedded', async (options?: VacuumOptions) => (app.database.kind === 'pglite' ? vacuumDue(app.database, options) : null));

  // Any process may hold a run (synchronous ones too), so every process listens for cancels.
  // Subscribed while the routes register and awaited before the server listens (onReady): the
  // embedded database may still be opening, and the registrations after this one need not wait.
  const subscriptions = [app.runNotices.onCancel((id) => app.runLeases.cancel(id))];
  const timers: NodeJS.Timeout[] = [];
  if (worker.concurrency > 0) {
    subscriptions.push(app.runNotices.onPending(() => pool.wake()));
    let vacuums = 0;
    const vacuum = async () => {
      const started = performance.now();
      try {
        const result = await app.vacuumEmbedded({ all: vacuums++ === 0 });
        if (!result) return;
        const { vacuumed, frozen, analyzed, failed } = result;
        if (vacuumed.length + analyzed.length > 0) log.info({ vacuumed, frozen, analyzed, ms: Math.round(performance.now() - started) }, 'embedded database vacuumed');
        if (failed.length > 0) log.warn({ failed }, 'embedded database vacuum failed for some tables');
      } catch (error) {
        log.warn({ err: loggableError(error) }, 'embedded database vacuum failed');
      }
    };
    // One job at a time: a job that outlasts the interval (or the first one, due with the
    // interval's own first tick when it is under a minute) is not joined by another.
    let running = false;
    const retention = async () => {
      if (running) return;
      running = true;
      try {
        const result = await app.runRetention();
        if (result.deleted + result.keysCleared + result.usageRowsDeleted + result.responsesDeleted + result.auditRowsDeleted > 0) {
          log.info(
            {
              deleted: result.deleted,
              keys_cleared: result.keysCleared,
              usage_rows_deleted: result.usageRowsDeleted,
              responses_deleted: result.responsesDeleted,
              audit_rows_deleted: result.auditRowsDeleted,
            },
            'retention job done',
          );
        }
      } catch (error) {
        log.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'retention job failed');
      } finally {
        await vacuum();
        running = false;
      }
    };
    timers.push(setTimeout(() => void retention(), Math.min(FIRST_RETENTION_DELAY_MS, worker.retentionIntervalMs)));
    timers.push(setInterval(() => void retention(), worker.retentionIntervalMs));
    for (const timer of timers) timer.unref();
  }
  for (const subscribed of subscriptions) subscribed.catch(() => {}); // reported by onReady
  app.addHook('onReady', async () => {
    await Promise.all(subscriptions);
    if (worker.concurrency > 0) pool.start();
  });

  // Draining starts with the close, alongside the HTTP drain, and is awaited before the database closes.
  let draining: Promise<void> | null = null;
  const drain = () => (draining ??= pool.drain(shutdownTimeoutMs));
  app.addHook('preClose', async () => void drain());
  app.addHook('onClose', async () => {
    for (const timer of timers) clearTimeout(timer);
    await drain();
    // A subscription that failed has nothing to stop.
    await Promise.all(subscriptions.map((subscribed) => subscribed.then((stop) => stop()).catch(() => {})));
  });
}

export default fp(workerPlugin, { name: 'worker', fastify: '5.x', dependencies: ['infrastructure', 'providers', 'ladders'] });
