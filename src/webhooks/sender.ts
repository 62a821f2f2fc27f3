// One delivery attempt over HTTP: a POST of the signed payload through an SSRF-guarded undici
// agent (every new connection is checked, like custom provider endpoints), ended at the
// timeout. Redirects are not followed: a 3xx is an answer other than 2xx, so a failure.
import { request, type Dispatcher } from 'undici';
import { createTransport } from '../providers/transport.js';
import { ENDPOINT_NOT_ALLOWED } from '../providers/ssrf.js';
import type { AttemptOutcome } from './deliveries.js';

export const USER_AGENT = 'ladder-webhooks/1';
/** What is kept of a connection error's message. */
const MAX_ERROR_CHARS = 300;

export interface SendOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
}

export interface HttpSender {
  send(options: SendOptions, now: () => number): Promise<AttemptOutcome & { ok: boolean }>;
  close(): Promise<void>;
}

export function createHttpSender(options: { timeoutMs: number; allowPrivateEndpoints: boolean; dispatcher?: Dispatcher }): HttpSender {
  // The endpoints agent of the provider transport: the guarded one unless private endpoints are allowed.
  const transport = createTransport({ connectTimeoutMs: options.timeoutMs, allowPrivateEndpoints: options.allowPrivateEndpoints, dispatcher: options.dispatcher });
  return {
    async send(message, now) {
      const started = now();
      const startedAt = new Date(started);
      const clock = performance.now();
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const signal = message.signal ? AbortSignal.any([message.signal, timeout]) : timeout;
      const latency = () => performance.now() - clock;
      try {
        const res = await request(message.url, {
          method: 'POST',
          dispatcher: transport.endpoints,
          headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...message.headers },
          body: message.body,
          signal,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        });
        // The answer's body is read (to free the connection) but never kept.
        await res.body.dump({ limit: 64 * 1024, signal });
        const ok = res.statusCode >= 200 && res.statusCode < 300;
        return { ok, startedAt, statusCode: res.statusCode, latencyMs: latency(), error: ok ? null : `The receiver answered ${res.statusCode}.` };
      } catch (error) {
        return { ok: false, startedAt, statusCode: null, latencyMs: latency(), error: describe(error, timeout.aborted, options.timeoutMs) };
      }
    },
    close: () => transport.close(),
  };
}

function describe(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `No complete answer within ${timeoutMs} ms.`;
  const err = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.cause?.code ?? err.code;
  if (code === ENDPOINT_NOT_ALLOWED) return 'Refused: the URL host resolves to a loopback, private, link-local or metadata address.';
  const message = err.cause?.message ?? err.message ?? String(error);
  return `Could not deliver: ${code ? `${code}: ` : ''}${message}`.slice(0, MAX_ERROR_CHARS);
}
