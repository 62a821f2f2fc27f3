// OpenTelemetry traces (docs/observability.md): decorates `app.telemetry`, the hooks the router
// and the run executor are given, and adds the server span hooks. Off (no OTLP endpoint), it
// is `noTelemetry`: no hook is added and no OpenTelemetry module is loaded.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { startTelemetry, type Telemetry } from '../telemetry/telemetry.js';

declare module 'fastify' {
  interface FastifyInstance {
    telemetry: Telemetry;
  }
}

export interface TelemetryOptions {
  /** Already started (tests, with an in-memory exporter); not shut down with the app. Default: from the config. */
  telemetry?: Telemetry;
}

async function telemetryPlugin(app: FastifyInstance, options: TelemetryOptions) {
  const telemetry = options.telemetry ?? (await startTelemetry(app.config.telemetry));
  app.decorate('telemetry', telemetry);
  if (!telemetry.enabled) return;
  telemetry.traceRequests(app);
  // Last of all (onClose hooks run in reverse): the spans of everything that closes before it are exported too.
  if (!options.telemetry) app.addHook('onClose', () => telemetry.shutdown());
  if (app.config.telemetry) app.log.info({ protocol: app.config.telemetry.protocol, capture_content: app.config.telemetry.captureContent }, 'exporting traces over OTLP');
}

export default fp(telemetryPlugin, { name: 'telemetry', fastify: '5.x', dependencies: ['infrastructure'] });
