// The router's one tracing hook: each vendor attempt is reported as it is sent and again with
// what it came to, so a tracer can open a span per attempt (src/telemetry/). Without a tracer
// the router sends exactly as before.
import type { VendorExchange } from './call-vendor.js';
import type { VendorStream } from './stream/vendor-stream.js';

/** What a routed exchange asks of a vendor, as GenAI spans name it (`gen_ai.operation.name`). */
export type AttemptOperation = 'chat' | 'embeddings' | 'count_tokens';

/** How one attempt ended: the vendor's answer (for a stream, its opening), or the error it failed with. */
export type AttemptEnd =
  | { status: number; requestId: string | null; output?: unknown; stream?: VendorStream }
  | { error: unknown };

export interface AttemptTracer {
  /** Called as an attempt is sent; the returned function is called once with how it ended. */
  start(operation: AttemptOperation, call: VendorExchange): (end: AttemptEnd) => void;
}

interface Sending<S> {
  operation: AttemptOperation;
  send(call: VendorExchange): Promise<S>;
}

/** The same exchange, its sends reported to `tracer`. */
export function tracedExchange<S extends { status: number; requestId: string | null }, E extends Sending<S>>(exchange: E, tracer: AttemptTracer): E {
  return Object.assign({}, exchange, {
    async send(call: VendorExchange): Promise<S> {
      const end = tracer.start(exchange.operation, call);
      try {
        const sent = await exchange.send(call);
        end(sent);
        return sent;
      } catch (error) {
        end({ error });
        throw error;
      }
    },
  });
}
