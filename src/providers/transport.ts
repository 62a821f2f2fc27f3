// Outbound HTTP: two long-lived undici Agents built once per router, never per request.
// Vendor base URLs are operator-set and trusted; user endpoints go through the SSRF-guarded agent.
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { endpointRefusal, guardedLookup, isBlockedAddress, isIpLiteral } from './ssrf.js';

export interface TransportOptions {
  /** TCP + TLS handshake limit per new connection. */
  connectTimeoutMs: number;
  /** When true, user endpoints may reach loopback and private networks (self-hosted installs, tests). */
  allowPrivateEndpoints: boolean;
  /** Replaces both agents (tests, proxies); the caller owns and closes it. */
  dispatcher?: Dispatcher | undefined;
}

export interface Transport {
  /** For catalog vendors at their default or operator-overridden base URL. */
  readonly vendors: Dispatcher;
  /** For user-supplied endpoints (custom, azure-openai). */
  readonly endpoints: Dispatcher;
  close(): Promise<void>;
}

const pool = { keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 };

function guardedAgent(connectTimeoutMs: number): Agent {
  const connectViaGuardedDns = buildConnector({ timeout: connectTimeoutMs, lookup: guardedLookup });
  // net.connect skips `lookup` for IP literals, so those are checked here, still at connect time.
  const connect: buildConnector.connector = (options, callback) => {
    if (isIpLiteral(options.hostname) && isBlockedAddress(options.hostname)) {
      callback(endpointRefusal(options.hostname), null);
      return;
    }
    connectViaGuardedDns(options, callback);
  };
  return new Agent({ ...pool, connect });
}

export function createTransport(options: TransportOptions): Transport {
  if (options.dispatcher) {
    const injected = options.dispatcher;
    return { vendors: injected, endpoints: injected, close: async () => {} };
  }
  const vendors = new Agent({ ...pool, connect: { timeout: options.connectTimeoutMs } });
  const endpoints = options.allowPrivateEndpoints ? vendors : guardedAgent(options.connectTimeoutMs);
  return {
    vendors,
    endpoints,
    async close() {
      await Promise.all(endpoints === vendors ? [vendors.close()] : [vendors.close(), endpoints.close()]);
    },
  };
}
