// Counts the provider router's attempts and watches its circuits, from outside the router:
// every routed call ends with its attempts in hand (on the result, or on the error), so
// the router itself only needs to let the breaker's state be read.
import { circuitKey } from '../providers/breaker.js';
import { ProviderRouteError, type ProviderRouter } from '../providers/router.js';
import type { Attempt, ProviderConnection } from '../providers/types.js';
import type { CircuitReading, Metrics } from './recorder.js';

// Connections whose circuit may not be closed; each closed one is forgotten at the next scrape.
const WATCH_LIMIT = 10_000;

export function instrumentRouter(router: ProviderRouter, metrics: Metrics): ProviderRouter {
  if (!metrics.enabled) return router;
  const watched = new Map<string, string>();
  const watch = (connections: ProviderConnection[]) => {
    if (watched.size >= WATCH_LIMIT) return;
    for (const c of connections) watched.set(circuitKey(c), c.provider);
  };
  metrics.watchCircuits(function* circuits(): Iterable<CircuitReading> {
    for (const [circuit, provider] of watched) {
      const state = router.circuitState(circuit);
      if (state === 'closed') watched.delete(circuit);
      else yield { provider, state };
    }
  });

  /** Counts the attempts of any routed call, however it ends. */
  async function counted<T extends { attempts: Attempt[] }>(connections: ProviderConnection[], routed: Promise<T>): Promise<T> {
    try {
      const result = await routed;
      metrics.providerAttempts(result.attempts);
      if (result.attempts.length > 1) watch(connections);
      return result;
    } catch (error) {
      if (error instanceof ProviderRouteError) metrics.providerAttempts(error.attempts);
      watch(connections);
      throw error;
    }
  }

  return {
    ...router,
    embed: (request, connections, signal, log) => counted(connections, router.embed(request, connections, signal, log)),
    countTokens: (model, body, connections, signal, log, betas) => counted(connections, router.countTokens(model, body, connections, signal, log, betas)),
    async call(request, connections, signal, log) {
      try {
        const result = await router.call(request, connections, signal, log);
        metrics.providerAttempts(result.attempts);
        // The usual answer, first try: no circuit could have changed but the answering one's, to closed.
        if (result.attempts.length > 1) watch(connections);
        return result;
      } catch (error) {
        if (error instanceof ProviderRouteError) metrics.providerAttempts(error.attempts);
        watch(connections);
        throw error;
      }
    },
    async stream(request, connections, signal, log) {
      try {
        const opened = await router.stream(request, connections, signal, log);
        metrics.providerAttempts(opened.attempts);
        if (opened.attempts.length > 1) watch(connections);
        return opened;
      } catch (error) {
        if (error instanceof ProviderRouteError) metrics.providerAttempts(error.attempts);
        watch(connections);
        throw error;
      }
    },
  };
}
