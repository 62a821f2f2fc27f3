// The tracing hooks the rest of the service is given (docs/observability.md): tracing on
// (src/telemetry/tracing.ts) or off (`noTelemetry` in src/telemetry/telemetry.ts).
import type { FastifyInstance } from 'fastify';
import type { PriceTable } from '../pricing/prices.js';
import type { AttemptTracer } from '../providers/attempt-tracer.js';
import type { RunSpans } from '../worker/execute.js';

export interface Telemetry {
  readonly enabled: boolean;
  /** The provider router's hook: a client span per vendor attempt, its cost priced with `prices`. */
  attemptTracer(prices: PriceTable): AttemptTracer | undefined;
  /** The run executor's hook: a span per ladder run, step and node. */
  readonly runs: RunSpans | undefined;
  /** The active span as a W3C `traceparent`, stored with a queued background run; null when there is none. */
  traceParent(): string | null;
  /** Adds the hooks that give every HTTP request its server span. */
  traceRequests(app: FastifyInstance): void;
  /** Exports the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}
