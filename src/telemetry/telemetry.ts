// Starting tracing, or not (docs/observability.md). Off, `noTelemetry` hands out no hook at
// all and no OpenTelemetry SDK module is ever loaded: the SDK and the span code are imported
// dynamically, and only when an OTLP endpoint is set.
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TelemetrySettings } from '../config.js';
import type { Telemetry } from './hooks.js';

export type { Telemetry } from './hooks.js';

export const noTelemetry: Telemetry = {
  enabled: false,
  attemptTracer: () => undefined,
  runs: undefined,
  traceParent: () => null,
  traceRequests: () => {},
  shutdown: async () => {},
};

/** Tracing as configured: `noTelemetry` when off. `exporter` replaces OTLP (tests' InMemorySpanExporter). */
export async function startTelemetry(settings: TelemetrySettings | null, exporter?: SpanExporter): Promise<Telemetry> {
  if (!settings) return noTelemetry;
  const [{ startSdk }, { createTracing }] = await Promise.all([import('./sdk.js'), import('./tracing.js')]);
  return createTracing(await startSdk(settings, exporter), settings);
}
