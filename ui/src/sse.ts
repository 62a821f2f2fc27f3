// Follows an SSE endpoint with fetch(), because EventSource cannot send an Authorization
// header: reconnects after a dropped connection with Last-Event-ID, so no event is missed or
// repeated, and stops at the terminal event (the server then ends the stream) or on abort.
import { SseParser, type SseEvent } from './sse-parser.js';

export interface FollowOptions {
  url: string;
  /** Called before each (re)connection, so a changed key is picked up. */
  headers: () => Record<string, string>;
  onEvent: (event: SseEvent) => void;
  /** True for the event after which the stream is complete. */
  isTerminal: (event: SseEvent) => boolean;
  /** A status the stream cannot recover from (401, 404, ...); following stops. */
  onFatal: (status: number, body: unknown) => void;
  /** Connection state, for the user: 'live', 'reconnecting' or 'ended'. */
  onState?: (state: 'live' | 'reconnecting' | 'ended') => void;
  signal: AbortSignal;
}

const RETRYABLE = new Set([429, 502, 503, 504]);

export async function followEvents(options: FollowOptions): Promise<void> {
  let lastEventId: string | null = null;
  let delay = 1000;
  while (!options.signal.aborted) {
    const parser = new SseParser();
    let finished = false;
    try {
      const headers: Record<string, string> = { ...options.headers(), accept: 'text/event-stream' };
      if (lastEventId !== null) headers['last-event-id'] = lastEventId;
      const res = await fetch(options.url, { headers, signal: options.signal, cache: 'no-store' });
      if (!res.ok || !res.body) {
        if (!RETRYABLE.has(res.status)) {
          options.onFatal(res.status, await res.json().catch(() => null));
          return;
        }
      } else {
        options.onState?.('live');
        delay = 1000;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const event of parser.push(value)) {
            lastEventId = event.id;
            options.onEvent(event);
            if (options.isTerminal(event)) finished = true;
          }
        }
      }
    } catch (error) {
      if (options.signal.aborted) return;
    }
    if (finished) {
      options.onState?.('ended');
      return;
    }
    options.onState?.('reconnecting');
    await sleep(parser.retryMs ?? delay, options.signal);
    delay = Math.min(delay * 2, 15_000);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
