// A client span per vendor attempt, with the GenAI semantic conventions: fallbacks and retries
// are sibling spans under the request's (or the ladder node's) span. A stream's span ends
// when the stream does. Never the key: only the model, the usage, the vendor's request id and,
// with OTEL_CAPTURE_CONTENT=true, the messages.
import { SpanKind, type Span } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import { nanosToUsd } from '../money.js';
import { costOf, type PriceTable } from '../pricing/prices.js';
import type { AttemptTracer } from '../providers/attempt-tracer.js';
import type { VendorCall, VendorExchange } from '../providers/call-vendor.js';
import { REASONS } from '../providers/policy.js';
import type { Usage } from '../providers/types.js';
import { VendorError } from '../providers/vendor-errors.js';
import { GEN_AI, LADDER, genAiSystem } from './names.js';
import type { Sdk } from './sdk.js';
import { failed } from './spans.js';

export function attemptSpans(sdk: Sdk, prices: PriceTable, captureContent: boolean): AttemptTracer {
  // Targets are resolved once per base URL (src/providers/targets.ts), so are their hosts here.
  const servers = new Map<string, { address: string; port: number }>();
  const serverOf = (origin: string) => {
    let server = servers.get(origin);
    if (!server) {
      const url = new URL(origin);
      if (servers.size >= 1000) servers.clear();
      servers.set(origin, (server = { address: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) }));
    }
    return server;
  };
  return {
    start(operation, call) {
      const server = serverOf(call.target.origin);
      const span = sdk.tracer.startSpan(
        `${operation} ${call.vendorModel}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            [GEN_AI.operation]: operation,
            [GEN_AI.system]: genAiSystem(call.provider),
            [GEN_AI.requestModel]: call.vendorModel,
            [LADDER.provider]: call.provider,
            [ATTR_SERVER_ADDRESS]: server.address,
            [ATTR_SERVER_PORT]: server.port,
          },
        },
        sdk.contexts.active(),
      );
      return (end) => {
        // The chat exchange adds the request to the call as it sends it.
        const request = (call as Partial<VendorCall>).request;
        if (request) requested(span, request, captureContent);
        if ('error' in end) {
          attemptFailed(span, end.error);
          span.end();
        } else if (end.stream) {
          const stream = end.stream;
          answered(span, end.status, end.requestId);
          stream.onEnd((failure) => {
            const usage = stream.usage();
            if (usage) used(span, usage, priced(call, usage, prices));
            if (failure) attemptFailed(span, failure);
            else span.setAttribute(LADDER.streamOutcome, stream.completed ? 'completed' : 'cancelled');
            span.end();
          });
        } else {
          answered(span, end.status, end.requestId);
          output(span, call, end.output, prices, captureContent);
          span.end();
        }
      };
    },
  };
}

function requested(span: Span, request: VendorCall['request'], captureContent: boolean): void {
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens !== undefined) span.setAttribute(GEN_AI.maxTokens, maxTokens);
  if (request.temperature !== undefined) span.setAttribute(GEN_AI.temperature, request.temperature);
  if (captureContent) span.setAttribute(GEN_AI.inputMessages, JSON.stringify(request.messages));
}

function answered(span: Span, status: number, requestId: string | null): void {
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
  if (requestId) span.setAttribute(LADDER.vendorRequestId, requestId);
}

/** The answer's model, usage, cost and (captured) messages; `output` is a chat answer, embeddings, or a token count. */
function output(span: Span, call: VendorExchange, out: unknown, prices: PriceTable, captureContent: boolean): void {
  if (typeof out !== 'object' || out === null) return;
  const { model, usage, choices } = out as { model?: unknown; usage?: Partial<Usage>; choices?: { message?: unknown; finish_reason?: unknown }[] };
  span.setAttribute(GEN_AI.responseModel, typeof model === 'string' ? model : call.vendorModel);
  if (usage && typeof usage.prompt_tokens === 'number') {
    // Embeddings report no completion tokens.
    const full: Usage = Object.assign({}, usage, { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens ?? 0, total_tokens: usage.total_tokens ?? usage.prompt_tokens });
    used(span, full, priced(call, full, prices));
  }
  if (Array.isArray(choices)) {
    span.setAttribute(GEN_AI.finishReasons, choices.map((c) => String(c.finish_reason)));
    if (captureContent) span.setAttribute(GEN_AI.outputMessages, JSON.stringify(choices.map((c) => c.message)));
  }
}

function used(span: Span, usage: Usage, costNanos: number): void {
  span.setAttribute(GEN_AI.inputTokens, usage.prompt_tokens);
  span.setAttribute(GEN_AI.outputTokens, usage.completion_tokens);
  span.setAttribute(LADDER.costUsd, nanosToUsd(costNanos));
}

// Priced as the usage ledger prices the call: by the model the caller asked for, when known.
const priced = (call: VendorExchange, usage: Usage, prices: PriceTable) => costOf((call as Partial<VendorCall>).request?.model ?? call.vendorModel, usage, prices);

function attemptFailed(span: Span, error: unknown): void {
  failed(span, error);
  if (!(error instanceof VendorError)) return;
  // The reason the x-ladder-attempts header gives, rather than the error class.
  span.setAttribute(ATTR_ERROR_TYPE, REASONS[error.kind]);
  if (error.status !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, error.status);
  if (error.requestId) span.setAttribute(LADDER.vendorRequestId, error.requestId);
}
