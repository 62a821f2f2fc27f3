// What every span of this service does alike: run work inside a span and end it with the
// work's outcome, and say what went wrong without repeating anything secret.
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import type { Sdk } from './sdk.js';

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** The parent; default: the active span. */
  parent?: Context;
  root?: boolean;
}

/** Runs `work` with a new span active; a throw marks the span failed and passes on. */
export async function inSpan<T>(sdk: Sdk, name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ?? sdk.contexts.active();
  const span = sdk.tracer.startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {}, links: options.links ?? [], root: options.root ?? false }, parent);
  try {
    return await sdk.contexts.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Marks a span failed: `error.type` is the error's stable code (our ApiError and VendorError
 * codes, a socket error's code), the status message the error's own, which for vendor errors
 * is already normalised and stripped of the key (src/providers/vendor-errors.ts).
 */
export function failed(span: Span, error: unknown): void {
  const { code, kind, message, name } = (error ?? {}) as { code?: unknown; kind?: unknown; message?: unknown; name?: unknown };
  const type = typeof code === 'string' ? code : typeof kind === 'string' ? kind : typeof name === 'string' ? name : 'error';
  span.setAttribute(ATTR_ERROR_TYPE, type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: typeof message === 'string' ? message : type });
}
