import type { ProviderConnection } from '../../src/providers/types.js';
import { createProviderRouter, type ProviderRouterOptions } from '../../src/providers/router.js';

let seq = 0;

export function connection(provider: string, apiKey: string, extra: Partial<ProviderConnection> = {}): ProviderConnection {
  seq += 1;
  return {
    id: `conn-${provider}-${seq}`,
    provider,
    priority: 0,
    apiKey,
    endpoint: null,
    createdAt: new Date(Date.UTC(2024, 0, 1, 0, 0, seq)),
    ...extra,
  };
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn';
  obj: object;
  msg: string;
}

/** A router with a capturing logger; remember to close it. */
export function routerWith(options: ProviderRouterOptions = {}) {
  const logs: LogLine[] = [];
  const logger = {
    debug: (obj: object, msg: string) => void logs.push({ level: 'debug', obj, msg }),
    info: (obj: object, msg: string) => void logs.push({ level: 'info', obj, msg }),
    warn: (obj: object, msg: string) => void logs.push({ level: 'warn', obj, msg }),
  };
  const router = createProviderRouter({ timeoutMs: 2000, connectTimeoutMs: 1000, logger, ...options });
  return { router, logs };
}

export const userSays = (text: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: text }] });

export async function rejection(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}
