// A server span per HTTP request, with the HTTP semantic conventions: named by the route's
// template (`POST /v1/:author/:slug/chat/completions`), never the raw path, and the child of
// the client's span when it sends a W3C `traceparent`. Headers other than the user agent
// are never recorded, so neither is any key.
import { SpanKind, SpanStatusCode, defaultTextMapGetter, trace, type Context, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Sdk } from './sdk.js';

export const propagator = new W3CTraceContextPropagator();

interface RequestSpan {
  span: Span;
  context: Context;
  errorType?: string;
}

export function traceRequests(app: FastifyInstance, sdk: Sdk): void {
  const spans = new WeakMap<FastifyRequest, RequestSpan>();

  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagator.extract(sdk.contexts.active(), request.headers, defaultTextMapGetter);
    const query = request.url.indexOf('?');
    const span = sdk.tracer.startSpan(
      request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: request.method,
          [ATTR_URL_PATH]: query === -1 ? request.url : request.url.slice(0, query),
          [ATTR_URL_SCHEME]: request.protocol,
          [ATTR_NETWORK_PROTOCOL_VERSION]: request.raw.httpVersion,
          [ATTR_CLIENT_ADDRESS]: request.ip,
          ...(request.headers['user-agent'] ? { [ATTR_USER_AGENT_ORIGINAL]: request.headers['user-agent'] } : {}),
        },
      },
      parent,
    );
    const context = trace.setSpan(parent, span);
    spans.set(request, { span, context });
    sdk.contexts.with(context, done);
  });

  // The body is read on the socket's own callbacks, outside the span's context: the handler
  // is entered again inside it (fastify calls it from the last preHandler's `done`).
  app.addHook('preHandler', (request, _reply, done) => {
    const entry = spans.get(request);
    if (entry) sdk.contexts.with(entry.context, done);
    else done();
  });

  app.addHook('onError', (request, _reply, error, done) => {
    const entry = spans.get(request);
    if (entry) entry.errorType = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : error.name;
    done();
  });

  const end = (request: FastifyRequest, status: number | null) => {
    const entry = spans.get(request);
    if (!entry) return;
    spans.delete(request);
    const { span } = entry;
    const route = request.routeOptions.url;
    if (route) {
      span.updateName(`${request.method} ${route}`);
      span.setAttribute(ATTR_HTTP_ROUTE, route);
    }
    if (status === null) {
      span.setAttribute(ATTR_ERROR_TYPE, 'client_closed_request');
    } else {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // A 4xx is the client's error, not the server's: the span stays unset (HTTP conventions).
      if (status >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, entry.errorType ?? String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      } else if (status >= 400 && entry.errorType) span.setAttribute(ATTR_ERROR_TYPE, entry.errorType);
    }
    span.end();
  };

  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    end(request, null);
    done();
  });
}
