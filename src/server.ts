// The process: configuration, TLS, listening, and graceful shutdown. `npm start` runs this.
import nodeModule from 'node:module';
import { pathToFileURL } from 'node:url';
import type http from 'node:http';
import type { FastifyInstance, FastifyServerFactory } from 'fastify';
import type { DestinationStream } from 'pino';
import { ConfigError, loadConfig, type Config } from './config.js';
import { loadTlsMaterial, type TlsMaterial } from './crypto/data-dir-secrets.js';
import { openDatabase, type Database } from './db/client.js';
import { loadEnvFile } from './env-file.js';
import { logDestination, type LogDestination } from './log-destination.js';
import { listenMetrics } from './metrics/listener.js';
import { startupReport } from './startup-report.js';
import type { HandshakeGuard } from './transport/handshake-guard.js';

export interface RunningServer {
  app: FastifyInstance;
  /** The base URL, e.g. https://127.0.0.1:8443 */
  url: string;
  /** The METRICS_PORT listener, e.g. http://127.0.0.1:9464; null when METRICS_PORT is unset. */
  metricsUrl: string | null;
  close(): Promise<void>;
}

// Load balancers probe health over plain HTTP, so behind a proxy these stay reachable.
const PROBE_PATHS = new Set(['/healthz', '/readyz']);

export interface StartOptions {
  logStream?: DestinationStream;
  /** Log lines `logStream` dropped since the start, for /metrics (src/log-destination.ts). */
  droppedLogLines?: () => number;
  /** An already open database (tests); the caller closes it. Default: opened from the config. */
  database?: Database;
  /** The config's database and TLS material, already being loaded (`startEarly`); the server closes the database. */
  started?: StartedEarly;
  /** Time source of quota windows (tests). Default Date.now. */
  clock?: () => number;
}

export interface StartedEarly {
  database: Promise<Database>;
  tls: Promise<TlsMaterial | null>;
}

/**
 * Starts opening the database (the embedded one's lock is taken at once, its thread compiles,
 * opens and migrates it) and reading or making the certificate, before the HTTP stack loads.
 * A failure is reported where `startServer` awaits it.
 */
export function startEarly(config: Config): StartedEarly {
  const started = {
    database: openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, early: true }),
    tls: config.trustProxy ? Promise.resolve(null) : loadTlsMaterial(config),
  };
  started.database.catch(() => {});
  started.tls.catch(() => {});
  return started;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const { Fastify, app, fastifyOptions, requestReceiptOptions, answerOnlyInEnvelope, createHttpsOnlyServer, httpsRequired, loadSchemaCompilers } = await import('./server-stack.js');
  const tls = await (options.started?.tls ?? (config.trustProxy ? null : loadTlsMaterial(config)));
  let handshakes: HandshakeGuard | null = null;
  // Fastify types its server as http.Server; an https.Server serves the same requests.
  const serverFactory: FastifyServerFactory | undefined = tls
    ? (handler) => {
        const created = createHttpsOnlyServer({ cert: tls.cert, key: tls.key, ...requestReceiptOptions(config) }, handler, {
          timeoutMs: config.tlsHandshakeTimeoutMs,
          maxPending: config.maxHandshakingConnections,
        });
        handshakes = created.handshakes;
        return created.server as unknown as http.Server;
      }
    : undefined;
  const fastify = Fastify({ ...fastifyOptions(config, options.logStream), serverFactory });
  answerOnlyInEnvelope(fastify.server);
  // Connections still handshaking are invisible to Node's closeAllConnections: shutdown drops them.
  fastify.addHook('preClose', async () => handshakes?.destroyAll());
  if (config.trustProxy) {
    fastify.addHook('onRequest', async (request) => {
      if (request.protocol !== 'https' && !PROBE_PATHS.has(request.url.split('?')[0]!)) throw httpsRequired();
    });
  }
  const database = options.database ? { database: options.database } : options.started ? { opening: options.started.database } : {};
  await fastify.register(app, { config, ...database, clock: options.clock });
  if (options.droppedLogLines) fastify.metrics.watchLogDrops(options.droppedLogLines);
  // A server's first listen() loads Node's cluster module (with child_process and dgram): 10-20 ms
  // on a slow machine, after the embedded database has opened. Asked for now, it loads while
  // listen() waits for the database, which at a start is nearly always still opening.
  void import('node:cluster');
  await fastify.listen({
    port: config.port,
    host: config.host,
    // Fastify cannot tell that our server factory speaks TLS; say it right in its own log line.
    listenTextResolver: (address) => `Server listening at ${tls ? address.replace(/^http:/, 'https:') : address}`,
  });
  // The schema compilers are needed neither to listen nor to answer the health probes, which
  // orchestrators send as soon as the port opens: loaded a second later, before the first request
  // in the usual case (a request that comes sooner loads them itself).
  const compilers = setTimeout(loadSchemaCompilers, 1_000).unref();

  const address = fastify.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `${tls ? 'https' : 'http'}://${host}:${port}`;
  for (const line of startupReport(config, tls)) fastify.log.info(line);
  // metrics: the local plain-HTTP listener (METRICS_PORT), closed before the app
  const metrics = config.metrics.port === null ? null : await startMetricsListener(fastify, config.metrics.port);
  const close = async () => {
    clearTimeout(compilers);
    await metrics?.close();
    await fastify.close();
  };
  return { app: fastify, url, metricsUrl: metrics?.url ?? null, close };
}

async function startMetricsListener(fastify: FastifyInstance, port: number) {
  try {
    const listener = await listenMetrics(fastify.metrics, port, (err) => fastify.log.warn({ err }, 'metrics scrape failed'));
    fastify.log.info(`Metrics listening at ${listener.url}/metrics`);
    return listener;
  } catch (error) {
    await fastify.close();
    throw error;
  }
}

/**
 * On SIGTERM/SIGINT: stop accepting, let in-flight requests finish within the bound, then
 * close the database. Listening starts before this resolves, so the handlers go in first:
 * a signal that arrives during start-up shuts down as soon as the server is up.
 */
async function serveUntilSignalled(config: Config, logs: LogDestination): Promise<void> {
  let server: RunningServer | null = null;
  let signalled: string | null = null;
  const shutdown = (running: RunningServer, signal: string) => {
    running.app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      running.app.log.warn({ timeout_ms: config.shutdownTimeoutMs }, 'in-flight requests did not finish in time; closing them');
      running.app.server.closeAllConnections();
    }, config.shutdownTimeoutMs);
    force.unref();
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        running.app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: string) => {
    if (signalled) return;
    signalled = signal;
    if (server) shutdown(server, signal);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  const started = startEarly(config);
  try {
    server = await startServer(config, { logStream: logs, droppedLogLines: () => logs.droppedTotal, started });
  } catch (error) {
    // Closed cleanly, and its data directory unlocked, before the process exits.
    await started.database.then((database) => database.close()).catch(() => {});
    throw error;
  }
  if (signalled) shutdown(server, signalled);
}

/**
 * Node 22.1 and later keep the code they compile in a cache on disk (the OS temp directory, or
 * NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so that a start after the
 * first compiles little; Node 20 has no such cache. Enabled before the HTTP stack, most of the
 * code, is imported, and handed to the embedded database's thread through the environment
 * (which is how a worker thread inherits it).
 */
function enableCompileCache(): void {
  const enable = (nodeModule as { enableCompileCache?: () => { directory?: string } }).enableCompileCache;
  const { directory } = enable?.() ?? {};
  if (directory && !process.env.NODE_COMPILE_CACHE) process.env.NODE_COMPILE_CACHE = directory;
}

async function main(): Promise<void> {
  enableCompileCache();
  let config: Config;
  try {
    // Settings missing from the environment may come from ./.env; the environment wins.
    loadEnvFile();
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // Asynchronous batched writes keep logging off the request path. Every way out (a signal's
  // shutdown, a failed start, an uncaught error) writes the lines still gathered first.
  const logs = logDestination();
  process.on('exit', () => flushOnExit(logs));
  await serveUntilSignalled(config, logs);
}

function flushOnExit(logs: LogDestination): void {
  try {
    logs.flushSync();
  } catch {
    // stdout is gone (its reader closed it): nothing can be written anywhere.
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`Failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
