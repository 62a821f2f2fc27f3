// Per-connection circuit breaker: after `failureThreshold` consecutive failures a connection is
// skipped for `cooldownMs`; then one caller gets a trial (half-open) while others keep skipping it.
// Circuits are keyed by whatever the caller passes; the router passes a key that changes with the
// connection's key and endpoint, so a fixed connection starts closed.
import { createHmac, randomBytes } from 'node:crypto';
import type { ProviderConnection } from './types.js';

export interface BreakerOptions {
  /** Consecutive failures that open the circuit. Default 3. */
  failureThreshold?: number;
  /** How long an open circuit skips the connection. Default 30000 ms. */
  cooldownMs?: number;
  /** Circuits remembered at most; past it the least recently failed is forgotten (closed). Default 10000. */
  maxCircuits?: number;
}

interface State {
  failures: number;
  openUntil: number;
  trialInFlight: boolean;
}

export type Admission = 'closed' | 'trial' | 'open';

export class CircuitBreaker {
  private readonly states = new Map<string, State>();
  private readonly threshold: number;
  private readonly cooldownMs: number;
  private readonly maxCircuits: number;

  constructor(options: BreakerOptions = {}, private readonly now: () => number = Date.now) {
    this.threshold = Math.max(1, options.failureThreshold ?? 3);
    this.cooldownMs = Math.max(0, options.cooldownMs ?? 30_000);
    this.maxCircuits = Math.max(1, options.maxCircuits ?? 10_000);
  }

  /** Circuits currently remembered (closed ones with no failure are not). */
  get size(): number {
    return this.states.size;
  }

  /** May this connection be tried now? A 'trial' must be ended by success(), failure() or release(). */
  admit(id: string): Admission {
    const state = this.states.get(id);
    if (!state || state.failures < this.threshold) return 'closed';
    if (this.now() < state.openUntil || state.trialInFlight) return 'open';
    state.trialInFlight = true;
    return 'trial';
  }

  /** admit() without its side effect: would this connection be tried now? */
  wouldAdmit(id: string): boolean {
    const state = this.states.get(id);
    return !state || state.failures < this.threshold || (this.now() >= state.openUntil && !state.trialInFlight);
  }

  /** Used when every candidate is open: the router still tries the one that reopens first. */
  force(id: string): void {
    const state = this.states.get(id);
    if (state) state.trialInFlight = true;
  }

  openUntil(id: string): number {
    return this.states.get(id)?.openUntil ?? 0;
  }

  success(id: string): void {
    this.states.delete(id);
  }

  failure(id: string): void {
    let state = this.states.get(id);
    if (state) {
      // Re-inserted, so the map's order is least recently failed first.
      this.states.delete(id);
    } else {
      state = { failures: 0, openUntil: 0, trialInFlight: false };
      // Forgetting a circuit only closes it early; a changed connection leaves its old one behind.
      if (this.states.size >= this.maxCircuits) this.states.delete(this.states.keys().next().value!);
    }
    this.states.set(id, state);
    state.failures += 1;
    state.trialInFlight = false;
    if (state.failures >= this.threshold) state.openUntil = this.now() + this.cooldownMs;
  }

  /** The attempt said nothing about the connection's health (caller abort, request rejected). */
  release(id: string): void {
    const state = this.states.get(id);
    if (state) state.trialInFlight = false;
  }

  state(id: string): 'closed' | 'open' | 'half-open' {
    const state = this.states.get(id);
    if (!state || state.failures < this.threshold) return 'closed';
    return this.now() < state.openUntil ? 'open' : 'half-open';
  }
}

// A circuit belongs to one connection as it is configured: a new key or endpoint is a new
// circuit, on every node as soon as it reads the change. The key is folded in through an HMAC
// under a per-process secret, so the breaker's map holds nothing that identifies it.
const circuitSecret = randomBytes(32);
const circuitKeys = new WeakMap<ProviderConnection, string>();

export function circuitKey(connection: ProviderConnection): string {
  let key = circuitKeys.get(connection);
  if (key === undefined) {
    const digest = createHmac('sha256', circuitSecret).update(connection.apiKey).update('\0').update(connection.endpoint ?? '').digest('base64url');
    key = `${connection.id}:${digest.slice(0, 22)}`;
    circuitKeys.set(connection, key);
  }
  return key;
}
