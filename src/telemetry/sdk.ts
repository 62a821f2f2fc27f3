// Starting and stopping the OpenTelemetry SDK: a tracer provider with the batch processor and
// the OTLP exporter of the configured protocol. The SDK reads the standard variables itself
// (endpoint, headers, OTEL_BSP_*, OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME and resource
// attributes). Loaded only when tracing is on (src/telemetry/telemetry.ts).
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Tracer } from '@opentelemetry/api';
import type { TelemetrySettings } from '../config.js';

export interface Sdk {
  tracer: Tracer;
  /** This SDK's own context: spans are made active here, never through the global API. */
  contexts: AsyncLocalStorageContextManager;
  /** Exports what is buffered, then stops. */
  shutdown(): Promise<void>;
}

/** `exporter`: instead of OTLP, sent span by span (tests' InMemorySpanExporter). */
export async function startSdk(settings: TelemetrySettings, exporter?: SpanExporter): Promise<Sdk> {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'ladder-service' }))
    .merge(detectResources({ detectors: [envDetector] })); // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
  const processor = exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(await otlpExporter(settings.protocol));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  const contexts = new AsyncLocalStorageContextManager().enable();
  return {
    tracer: provider.getTracer('ladder-service'),
    contexts,
    async shutdown() {
      await provider.shutdown();
      contexts.disable();
    },
  };
}

async function otlpExporter(protocol: TelemetrySettings['protocol']): Promise<SpanExporter> {
  // Only the protocol's own exporter is loaded.
  if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
}
