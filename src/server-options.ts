// Fastify's own settings, shared by the real server and the tests' build() helper.
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { LogController, type FastifyHttpOptions, type FastifyServerOptions } from 'fastify';
import type { DestinationStream, LoggerOptions } from 'pino';
import type { Config } from './config.js';
import { createLazyCompilers } from './http/lazy-schemas.js';
import { redactSecrets } from './log-redaction.js';
import { REQUEST_ID_LABEL, requestLogger } from './request-logger.js';
import { frameworkErrors, writeClientError } from './plugins/errors.js';

// A caller's request id is kept when it is short and plain; otherwise we make our own.
const REQUEST_ID_RE = /^[\w.:-]{1,128}$/;

export function loggerOptions(config: Pick<Config, 'logLevel'>): LoggerOptions {
  return {
    level: config.logLevel,
    // Credentials are censored wherever they sit in a logged object (src/log-redaction.ts).
    formatters: { log: redactSecrets },
  };
}

/**
 * Node's timeouts for receiving a request, in both modes. Node checks them on an interval (30 s
 * by default), so a short timeout gets a proportionally short interval.
 */
export function requestReceiptOptions(config: Pick<Config, 'headersTimeoutMs'>): http.ServerOptions {
  return {
    headersTimeout: config.headersTimeoutMs,
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(config.headersTimeoutMs / 4))),
  };
}

export function fastifyOptions(config: Config, logStream?: DestinationStream): FastifyHttpOptions<http.Server> {
  return {
    logger: { ...loggerOptions(config), ...(logStream ? { stream: logStream } : {}) } as FastifyServerOptions['logger'],
    // Our request-log plugin writes one line per request instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: REQUEST_ID_LABEL }),
    childLoggerFactory: requestLogger,
    // First start of the embedded database creates its files, which can take a while.
    pluginTimeout: 120_000,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
    },
    frameworkErrors,
    clientErrorHandler: writeClientError,
    bodyLimit: config.bodyLimitBytes,
    // For the plain-HTTP server Fastify creates (TRUST_PROXY); the TLS one gets them from server.ts.
    http: requestReceiptOptions(config),
    trustProxy: config.trustProxy,
    // Our errors plugin answers during shutdown, in the usual envelope.
    return503OnClosing: false,
    // Each route's validators and serializers are compiled when first used, not before listening.
    schemaController: { compilersFactory: createLazyCompilers().factories },
    // verbose: errors carry their schema, so a failed union can name what it accepts.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false, verbose: true } },
  };
}
