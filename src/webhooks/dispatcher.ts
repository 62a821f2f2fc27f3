// The webhook senders of one process: every `pollMs` (and whenever a slot frees up while work
// is due) they take due deliveries from the queue, up to `concurrency` at once, and make one
// attempt each: the payload fixed at the first attempt, signed with the endpoint's secrets,
// posted, and the outcome recorded with what follows it (src/webhooks/backoff.ts).
import { SecretUnavailableError, type SecretBox } from '../crypto/secret-box.js';
import { afterFailure } from './backoff.js';
import type { DeliveryQueue, HeldDelivery, NextStep } from './deliveries.js';
import type { HttpSender } from './sender.js';
import { signedHeaders } from './signing.js';
import { signingSecrets } from './store.js';

export interface DispatcherLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface WebhookDispatcherOptions {
  queue: DeliveryQueue;
  sender: HttpSender;
  box: SecretBox;
  /** The message body of an instance's event, or null when the instance no longer exists. */
  render: (instanceId: string, eventType: string) => Promise<string | null>;
  /** Attempts under way at once in the background; 0 sends nothing in the background. */
  concurrency: number;
  pollMs: number;
  /** The time deliveries are scheduled by (tests move it on). */
  clock: () => number;
  log: DispatcherLogger;
}

/** How one attempt ended, as its caller sees it. */
export interface AttemptResult {
  delivered: boolean;
  /** False when another process had taken the delivery over: nothing was recorded. */
  recorded: boolean;
  statusCode: number | null;
  error: string | null;
}

// A small batch keeps one process from taking deliveries another idle one could send sooner.
const CLAIM_BATCH = 16;
export const INSTANCE_GONE = 'The instance was deleted before its event could be delivered.';
export const SECRET_UNREADABLE = 'The signing secret cannot be decrypted with the configured encryption keys; nothing was sent.';

export function createWebhookDispatcher(options: WebhookDispatcherOptions) {
  const { queue, clock, log } = options;
  const active = new Set<Promise<void>>();
  const controllers = new Set<AbortController>();
  let timer: NodeJS.Timeout | null = null;
  let claiming: Promise<void> | null = null;
  let stopping = false;

  async function finish(held: HeldDelivery, outcome: { startedAt: Date; statusCode: number | null; latencyMs: number; error: string | null }, next: NextStep): Promise<AttemptResult> {
    const { held: recorded, disabled } = await queue.record(held, outcome, next, new Date(clock()));
    const line = { delivery_id: held.id, webhook_id: held.endpointId, attempt: held.attempt, status_code: outcome.statusCode, latency_ms: Math.round(outcome.latencyMs) };
    if (!recorded) log.warn(line, 'webhook delivery was taken over by another process; its outcome is not recorded');
    else if (next.status === 'delivered') log.info(line, 'webhook delivered');
    else log.info({ ...line, next: next.status, error: outcome.error }, next.status === 'failed' ? 'webhook delivery given up' : 'webhook delivery failed; will retry');
    if (disabled) log.warn({ webhook_id: held.endpointId }, 'webhook endpoint disabled: it has been failing for 3 days');
    return { delivered: next.status === 'delivered', recorded, statusCode: outcome.statusCode, error: outcome.error };
  }

  /** One attempt of a delivery this process holds. */
  async function deliver(held: HeldDelivery, signal?: AbortSignal): Promise<AttemptResult> {
    const startedAt = new Date(clock());
    const noRequest = (error: string) => ({ startedAt, statusCode: null, latencyMs: 0, error });
    let payload = held.payload;
    if (payload === null) {
      const rendered = held.instanceId ? await options.render(held.instanceId, held.eventType) : null;
      if (rendered === null) return finish(held, noRequest(INSTANCE_GONE), { status: 'failed' });
      payload = await queue.fixPayload(held, rendered);
      if (payload === null) return { delivered: false, recorded: false, statusCode: null, error: null };
    }
    let secrets: string[];
    try {
      secrets = signingSecrets(options.box, { ...held, id: held.endpointId }, clock());
    } catch (error) {
      if (!(error instanceof SecretUnavailableError)) throw error;
      return finish(held, noRequest(SECRET_UNREADABLE), nextAfterFailure(held));
    }
    const headers = signedHeaders(secrets, held.id, Math.floor(clock() / 1000), payload);
    const outcome = await options.sender.send({ url: held.url, headers, body: payload, ...(signal ? { signal } : {}) }, clock);
    return finish(held, outcome, outcome.ok ? { status: 'delivered' } : nextAfterFailure(held));
  }

  function nextAfterFailure(held: HeldDelivery): NextStep {
    const after = afterFailure(held.attempt, new Date(held.createdAt), clock());
    return 'giveUp' in after ? { status: 'failed' } : { status: 'pending', retryAt: after.retryAt };
  }

  function start(held: HeldDelivery): Promise<void> {
    const controller = new AbortController();
    controllers.add(controller);
    const run = deliver(held, controller.signal)
      .then(() => {})
      .catch((error: unknown) => log.warn({ delivery_id: held.id, err: { message: error instanceof Error ? error.message : String(error) } }, 'webhook attempt failed to run'))
      .finally(() => {
        controllers.delete(controller);
        active.delete(run);
      });
    active.add(run);
    return run;
  }

  /** Claims what is due while there is room; `limit` overrides the free slots (tests). */
  async function claimDue(limit: number): Promise<HeldDelivery[]> {
    return queue.claim(Math.min(limit, CLAIM_BATCH), new Date(clock()));
  }

  async function poll(): Promise<void> {
    if (stopping || claiming) return;
    claiming = (async () => {
      for (let round = 0; round < 100 && !stopping; round++) {
        const free = options.concurrency - active.size;
        if (free <= 0) break;
        const rows = await claimDue(free);
        for (const row of rows) void start(row).then(() => void poll());
        if (rows.length < Math.min(free, CLAIM_BATCH)) break;
      }
    })()
      .catch((error: unknown) => log.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'claiming webhook deliveries failed'))
      .finally(() => {
        claiming = null;
      });
    await claiming;
  }

  return {
    deliver,

    /** Takes up to `limit` due deliveries and makes their attempts, waiting for all; how many there were. */
    async runOnce(limit = CLAIM_BATCH): Promise<number> {
      const rows = await claimDue(limit);
      await Promise.all(rows.map(start));
      return rows.length;
    },

    start(): void {
      if (options.concurrency <= 0 || timer) return;
      timer = setInterval(() => void poll(), options.pollMs);
      timer.unref();
      void poll();
    },

    get active(): number {
      return active.size;
    },

    /** Stops claiming, lets attempts under way finish for up to `timeoutMs`, then aborts them (recorded as failed, retried later). */
    async drain(timeoutMs: number): Promise<void> {
      stopping = true;
      if (timer) clearInterval(timer);
      timer = null;
      await claiming;
      if (active.size === 0) return;
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(active), new Promise((resolve) => (wait = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(wait);
      for (const controller of controllers) controller.abort();
      await Promise.all(active);
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
