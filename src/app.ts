// The application as a plain Fastify plugin: the server registers it behind TLS, tests
// register it directly. Layers register in order: infrastructure, services, routes.
// This file lists every route prefix, so it shows the whole API at a glance.
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import errors from './plugins/errors.js';
import requestEncoding from './plugins/request-encoding.js';
import requestLog from './plugins/request-log.js';
import infrastructure, { type InfrastructureOptions } from './plugins/infrastructure.js';
import metrics from './plugins/metrics.js';
import telemetry, { type TelemetryOptions } from './plugins/telemetry.js';
import auth from './plugins/auth.js';
import openapi from './plugins/openapi.js';
import webUi from './plugins/web-ui.js';
import providers from './plugins/providers.js';
import ladders from './plugins/ladders.js';
import quotas, { type QuotaOptions } from './plugins/quotas.js';
import worker from './plugins/worker.js';
import instanceEvents from './plugins/instance-events.js';
import webhooks from './plugins/webhooks.js';
import adminRoutes from './routes/admin/index.js';
import healthRoutes from './routes/health/index.js';
import metricsRoute from './routes/metrics/index.js';
import catalogRoute from './routes/providers/catalog.js';
import providerRoutes from './routes/providers/index.js';
import chatRoutes from './routes/chat/index.js';
import responseRoutes from './routes/responses/index.js';
import embeddingRoutes from './routes/embeddings/index.js';
import messagesRoutes from './routes/messages/index.js';
import modelRoutes from './routes/models/index.js';
import validateRoutes from './routes/validate/index.js';
import ladderRoutes from './routes/ladders/index.js';
import ladderChatRoutes from './routes/ladders/chat.js';
import pipelineStartRoute from './routes/pipelines/start.js';
import pipelineReadRoutes from './routes/pipelines/read.js';
import pipelineCancelRoute from './routes/pipelines/cancel.js';
import pipelineRerunRoute from './routes/pipelines/rerun.js';
import usageRoutes from './routes/usage/index.js';
import pipelineEventRoutes from './routes/pipelines/events.js';
import webhookRoutes from './routes/webhooks/index.js';
import webhookDeliveryRoutes from './routes/webhooks/deliveries.js';
import accountRoutes from './routes/account/index.js';
import apiKeyRoutes from './routes/api-keys/index.js';

export type AppOptions = InfrastructureOptions & QuotaOptions & TelemetryOptions;

const app: FastifyPluginAsync<AppOptions> = async (fastify, options) => {
  // The API speaks JSON only; any other body gets 415 instead of a confusing schema error.
  fastify.removeContentTypeParser('text/plain');
  await fastify.register(errors);
  await fastify.register(requestEncoding); // a compressed request body: 415, never read as plain
  await fastify.register(requestLog);
  await fastify.register(infrastructure, options);
  await fastify.register(telemetry, { ...(options.telemetry ? { telemetry: options.telemetry } : {}) }); // traces: before every route (docs/observability.md)
  await fastify.register(metrics); // metrics: before the services that count through it
  await fastify.register(auth);
  await fastify.register(quotas, { clock: options.clock }); // quotas: limits, spend, usage ledger
  await fastify.register(providers);
  await fastify.register(ladders);
  await fastify.register(worker);
  await fastify.register(webhooks, { clock: options.clock }); // webhooks: endpoints, queue, senders (docs/webhooks.md)
  await fastify.register(instanceEvents);
  await fastify.register(openapi);

  // Public: no authentication.
  await fastify.register(healthRoutes);
  await fastify.register(webUi);
  await fastify.register(metricsRoute); // GET /metrics, only with METRICS_TOKEN (docs/metrics.md)
  await fastify.register(catalogRoute, { prefix: '/v1/providers' });

  // Without ADMIN_TOKEN the admin API does not exist, as far as anyone can tell: no routes.
  if (options.config.adminToken) await fastify.register(adminRoutes, { prefix: '/v1/admin' });

  // Anthropic's Messages API: its own key header (x-api-key) and error shape (docs/apis.md).
  await fastify.register(messagesRoutes, { prefix: '/v1' });

  // Everything else needs an API key.
  await fastify.register(async (authed) => {
    authed.addHook('onRequest', authed.requireApiKey);
    await authed.register(providerRoutes, { prefix: '/v1/providers' });
    await authed.register(chatRoutes, { prefix: '/v1/chat' });
    await authed.register(responseRoutes, { prefix: '/v1/responses' }); // OpenAI's Responses API (docs/responses.md)
    await authed.register(embeddingRoutes, { prefix: '/v1' });
    await authed.register(modelRoutes, { prefix: '/v1' });
    await authed.register(validateRoutes, { prefix: '/v1/validate' });
    // Background runs (docs/pipelines.md).
    await authed.register(pipelineStartRoute, { prefix: '/v1/pipelines' });
    await authed.register(pipelineReadRoutes, { prefix: '/v1/pipelines' });
    await authed.register(pipelineCancelRoute, { prefix: '/v1/pipelines' });
    await authed.register(pipelineRerunRoute, { prefix: '/v1/pipelines' });
    await authed.register(pipelineEventRoutes, { prefix: '/v1/pipelines' });
    await authed.register(usageRoutes, { prefix: '/v1/usage' });
    await authed.register(accountRoutes, { prefix: '/v1/account' });
    // Managing the account needs a `manage` key; a `use` key gets 403 insufficient_scope (docs/accounts.md).
    await authed.register(async (manage) => {
      manage.addHook('onRequest', manage.requireManageScope);
      await manage.register(apiKeyRoutes, { prefix: '/v1/api-keys' });
      // Webhooks when a run ends (docs/webhooks.md).
      await manage.register(webhookRoutes, { prefix: '/v1/webhooks' });
      await manage.register(webhookDeliveryRoutes, { prefix: '/v1/webhooks' });
    });
    // /v1/{author}/...: static paths above win over these parametric ones.
    await authed.register(ladderRoutes, { prefix: '/v1' });
    await authed.register(ladderChatRoutes, { prefix: '/v1' });
  });
};

export default fp(app, { name: 'app', fastify: '5.x' });
