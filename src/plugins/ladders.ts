// Services for ladders: the saved ladders and their versions, instance rows, and the runner
// that executes a ladder through the caller's provider connections, holding a lease on it.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { CallerSignal } from '../abort-scope.js';
import { instrumentRunner } from '../metrics/instrument-runner.js';
import type { RouterLogger } from '../providers/router.js';
import { relayedCall } from '../providers/stream/relayed-call.js';
import type { ChatRequest, DeltaSink, ProviderConnection } from '../providers/types.js';
import { createInstanceService, type InstanceService } from '../services/instances.js';
import { createLadderRunner, type LadderRunner } from '../services/ladder-runs.js';
import { createLadderService, type LadderService } from '../services/ladders.js';
import { createRunNotices, type RunNotices } from '../services/run-notices.js';
import { estimatePromptTokens } from '../usage/metering.js';
import { preparedInsertRunning } from '../worker/claim.js';
import { createRunExecutor, type RunExecutor } from '../worker/execute.js';
import { createLeaseKeeper, type LeaseKeeper } from '../worker/lease.js';

declare module 'fastify' {
  interface FastifyInstance {
    ladders: LadderService;
    instances: InstanceService;
    ladderRunner: LadderRunner;
    runNotices: RunNotices;
    /** The leases of the runs this process holds (see src/worker/lease.ts). */
    runLeases: LeaseKeeper;
    runExecutor: RunExecutor;
    /** This process, as instances' claimed_by names it. */
    runHolder: string;
  }
}

async function laddersPlugin(app: FastifyInstance) {
  const { ladders: settings } = app.config;
  const instances = createInstanceService(app.db);
  const { worker } = app.config;
  const holder = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const leases = createLeaseKeeper({
    database: app.database,
    leaseMs: worker.leaseMs,
    checkMs: worker.cancelCheckMs,
    // One process owns the embedded database's directory: nobody can take its runs over.
    exclusive: app.database.kind === 'pglite',
    log: app.log.child({ component: 'leases' }),
  });
  const route = (request: Parameters<typeof app.providerRouter.call>[0], connections: Parameters<typeof app.providerRouter.call>[1], signal?: CallerSignal, log?: Parameters<typeof app.providerRouter.call>[3]) =>
    app.providerRouter.call(request, connections, signal, log);
  // A streamed run's answer: the router's stream, read to its end and relayed as it comes (src/routes/ladders/stream.ts).
  const relay = async (request: ChatRequest, connections: ProviderConnection[], onDelta: DeltaSink, signal?: CallerSignal, log?: RouterLogger) =>
    relayedCall(await app.providerRouter.stream(request, connections, signal, log), onDelta, estimatePromptTokens(request));
  const runSpans = app.telemetry.runs; // traces: a span per run, step and node
  const executor = createRunExecutor({ database: app.database, leases, route, relay, prices: app.prices, ...(runSpans ? { tracer: runSpans } : {}) });
  app.decorate('runLeases', leases);
  app.decorate('runExecutor', executor);
  app.decorate('runHolder', holder);
  app.decorate('ladders', createLadderService(app.db));
  app.decorate('instances', instances);
  app.decorate('runNotices', createRunNotices(app.database));
  app.decorate(
    'ladderRunner',
    instrumentRunner(createLadderRunner({ // metrics: counts the synchronous runs
      instances,
      startSync: preparedInsertRunning(app.database, { holder, leaseMs: worker.leaseMs }),
      executor,
      connections: app.connections,
      limits: {
        defaultMaxSpend: settings.defaultMaxSpend,
        maxNodesPerStep: settings.maxNodesPerStep,
        maxModelCallsPerRun: settings.maxModelCallsPerRun,
        maxRecursionDepth: settings.maxRecursionDepth,
        maxRunMs: settings.maxRunMs,
        maxConcurrentCalls: settings.maxConcurrentCalls,
        maxOutputTokens: settings.maxOutputTokens,
        maxRunBytes: settings.maxRunBytes,
      },
      metering: app.metering, // quotas: limits and the usage ledger for every model call
      ...(app.telemetry.enabled ? { traceParent: () => app.telemetry.traceParent() } : {}), // traces: a background run links to its request
    }), app.metrics),
  );
  // Sync runs still under way at close have lost their clients; their rows are failed or cancelled by then.
  app.addHook('onClose', () => leases.stop());
}

export default fp(laddersPlugin, { name: 'ladders', fastify: '5.x', dependencies: ['infrastructure', 'providers', 'quotas', 'metrics', 'telemetry'] });
