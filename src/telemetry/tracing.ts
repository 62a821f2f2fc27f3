// Tracing on: the hooks of src/telemetry/telemetry.ts over a started SDK.
import { defaultTextMapSetter } from '@opentelemetry/api';
import type { TelemetrySettings } from '../config.js';
import { attemptSpans } from './attempt-spans.js';
import { propagator, traceRequests } from './http-spans.js';
import { runSpans } from './run-spans.js';
import type { Sdk } from './sdk.js';
import type { Telemetry } from './hooks.js';

export function createTracing(sdk: Sdk, settings: TelemetrySettings): Telemetry {
  return {
    enabled: true,
    attemptTracer: (prices) => attemptSpans(sdk, prices, settings.captureContent),
    runs: runSpans(sdk, settings.captureContent),
    traceParent() {
      const carrier: Record<string, string> = {};
      propagator.inject(sdk.contexts.active(), carrier, defaultTextMapSetter);
      return carrier.traceparent ?? null;
    },
    traceRequests: (app) => traceRequests(app, sdk),
    shutdown: () => sdk.shutdown(),
  };
}
