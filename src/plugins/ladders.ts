// Services for ladders: the saved ladders and their versions, instance rows, and the runner
// that executes a ladder through the caller's provider connections.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { instrumentRunner } from '../metrics/instrument-runner.js';
import { createInstanceService, type InstanceService } from '../services/instances.js';
import { createLadderRunner, type LadderRunner } from '../services/ladder-runs.js';
import { createLadderService, type LadderService } from '../services/ladders.js';
import { createRunNotices, type RunNotices } from '../services/run-notices.js';

declare module 'fastify' {
  interface FastifyInstance {
    ladders: LadderService;
    instances: InstanceService;
    ladderRunner: LadderRunner;
    runNotices: RunNotices;
  }
}

async function laddersPlugin(app: FastifyInstance) {
  const { ladders: settings } = app.config;
  const instances = createInstanceService(app.db);
  app.decorate('ladders', createLadderService(app.db));
  app.decorate('instances', instances);
  app.decorate('runNotices', createRunNotices(app.database));
  app.decorate(
    'ladderRunner',
    instrumentRunner(createLadderRunner({ // metrics: counts the synchronous runs
      instances,
      connections: app.connections,
      route: (request, connections, signal, log) => app.providerRouter.call(request, connections, signal, log),
      limits: {
        defaultMaxSpend: settings.defaultMaxSpend,
        maxNodesPerStep: settings.maxNodesPerStep,
        maxModelCallsPerRun: settings.maxModelCallsPerRun,
        maxRecursionDepth: settings.maxRecursionDepth,
        maxRunMs: settings.maxRunMs,
        maxConcurrentCalls: settings.maxConcurrentCalls,
      },
      prices: app.prices,
      metering: app.metering, // quotas: limits and the usage ledger for every model call
    }), app.metrics),
  );
}

export default fp(laddersPlugin, { name: 'ladders', fastify: '5.x', dependencies: ['infrastructure', 'providers', 'quotas', 'metrics'] });
