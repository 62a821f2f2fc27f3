// Services for direct model access: the caller's connections and the fallback router.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { CallerSignal } from '../abort-scope.js';
import { instrumentRouter } from '../metrics/instrument-router.js';
import { createProviderRouter, type ProviderRouter, type RouterLogger } from '../providers/router.js';
import type { RoutedStream } from '../providers/stream/routed-stream.js';
import type { ChatRequest, ChatResult } from '../providers/types.js';
import type { EmbeddingRequest } from '../providers/embeddings/types.js';
import type { EmbeddingResult } from '../providers/embeddings/route.js';
import type { TokenCount } from '../providers/messages/count-tokens.js';
import type { MessagesBody } from '../providers/messages/types.js';
import { connectionServiceOptions, createConnectionService, type ConnectionService } from '../services/provider-connections.js';

declare module 'fastify' {
  interface FastifyInstance {
    connections: ConnectionService;
    providerRouter: ProviderRouter;
    /** One model call on behalf of an account, through its connections and fallback. */
    callModel(accountId: string, request: ChatRequest, signal?: CallerSignal, log?: RouterLogger): Promise<ChatResult>;
    /** The same call streamed: resolves with the first chunk in hand; `signal` cancels the stream too. */
    streamModel(accountId: string, request: ChatRequest, signal?: CallerSignal, log?: RouterLogger): Promise<RoutedStream>;
    /** Embeddings on behalf of an account, through its connections whose vendor has them. */
    embedModel(accountId: string, request: EmbeddingRequest, signal?: CallerSignal, log?: RouterLogger): Promise<EmbeddingResult>;
    /** A Messages request's input tokens, counted by a connection whose vendor offers counting. */
    countMessageTokens(accountId: string, model: string, body: MessagesBody, signal?: AbortSignal, log?: RouterLogger, betas?: string): Promise<TokenCount>;
  }
}

async function providers(app: FastifyInstance) {
  const { config } = app;
  const connections = createConnectionService(app.db, app.secretBox, connectionServiceOptions(config));
  // metrics: attempts and circuit states are counted around the router
  const router = instrumentRouter(createProviderRouter({
    timeoutMs: config.providers.timeoutMs,
    requestTimeoutMs: config.providers.requestTimeoutMs,
    connectTimeoutMs: config.providers.connectTimeoutMs,
    baseUrls: config.providers.baseUrls,
    allowPrivateEndpoints: config.providers.allowPrivateEndpoints,
    breaker: { failureThreshold: config.providers.breakerFailureThreshold, cooldownMs: config.providers.breakerCooldownMs },
    logger: app.log.child({ component: 'provider-router' }),
    maxResponseBytes: config.providers.maxResponseBytes,
    maxEmbeddingsResponseBytes: config.providers.maxEmbeddingsResponseBytes,
    stream: config.providers.stream,
    ...(app.telemetry.enabled ? { tracer: app.telemetry.attemptTracer(app.prices) } : {}), // traces: a span per attempt
  }), app.metrics);
  app.decorate('connections', connections);
  app.decorate('providerRouter', router);
  app.decorate('callModel', async (accountId: string, request: ChatRequest, signal?: CallerSignal, log?: RouterLogger) =>
    router.call(request, await connections.forRouting(accountId), signal, log),
  );
  app.decorate('streamModel', async (accountId: string, request: ChatRequest, signal?: CallerSignal, log?: RouterLogger) =>
    router.stream(request, await connections.forRouting(accountId), signal, log),
  );
  app.decorate('embedModel', async (accountId: string, request: EmbeddingRequest, signal?: CallerSignal, log?: RouterLogger) =>
    router.embed(request, await connections.forRouting(accountId), signal, log),
  );
  app.decorate('countMessageTokens', async (accountId: string, model: string, body: MessagesBody, signal?: AbortSignal, log?: RouterLogger, betas?: string) =>
    router.countTokens(model, body, await connections.forRouting(accountId), signal, log, betas),
  );
  app.addHook('onClose', () => router.close());
}

export default fp(providers, { name: 'providers', fastify: '5.x', dependencies: ['infrastructure', 'metrics', 'telemetry'] });
