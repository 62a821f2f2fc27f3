// When a failed delivery is tried again, when it is given up, and when a failing endpoint is
// disabled. Written once here; the sender applies it after every failed attempt.

/** The first retry comes this long after the first failure; each later one waits twice as long. */
export const FIRST_RETRY_MS = 5_000;
/** No wait between two attempts is longer than this. */
export const MAX_RETRY_MS = 60 * 60 * 1000;
/** A delivery is retried until it succeeds or this long after it was queued (then given up at its next failure). */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** An endpoint whose deliveries have failed without a success for this long is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 60 * 60 * 1000;
/** Up to this fraction is added to each wait, so that deliveries failed together do not all come back together. */
const JITTER = 0.1;

/** The wait after the `failedAttempts`-th failure (1 for the first): 5 s, 10 s, 20 s ... capped at 1 hour, plus up to 10 %. */
export function retryDelayMs(failedAttempts: number, random: () => number = Math.random): number {
  const base = Math.min(FIRST_RETRY_MS * 2 ** Math.min(Math.max(failedAttempts - 1, 0), 30), MAX_RETRY_MS);
  return Math.round(base * (1 + JITTER * random()));
}

/** What follows a failed attempt: another one at `retryAt`, or none. */
export function afterFailure(failedAttempts: number, queuedAt: Date, now: number, random?: () => number): { retryAt: Date } | { giveUp: true } {
  if (now - queuedAt.getTime() >= RETRY_WINDOW_MS) return { giveUp: true };
  return { retryAt: new Date(now + retryDelayMs(failedAttempts, random)) };
}
