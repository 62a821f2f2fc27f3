// Failed admin authentications per client address, in a sliding window of one minute, so
// that ADMIN_TOKEN cannot be guessed at network speed. While an address is over the limit
// every admin request from it is refused, a correct token included: otherwise the throttle
// would only slow down the guesses, not stop a guess from being confirmed.

const WINDOW_MS = 60_000;
/** Addresses remembered at most; the least recently failing one is forgotten first. */
export const MAX_TRACKED_ADDRESSES = 10_000;

export interface AuthThrottle {
  /** Milliseconds until `address` may try again; 0 when it may now. */
  blockedFor(address: string): number;
  /** Records a failed attempt from `address`. */
  fail(address: string): void;
  /** Addresses currently tracked (for tests and metrics). */
  readonly size: number;
}

/** `maxFailures` per minute per address; 0 turns the throttle off. */
export function createAuthThrottle(maxFailures: number, now: () => number = Date.now, maxAddresses = MAX_TRACKED_ADDRESSES): AuthThrottle {
  // Each address keeps the times of its last `maxFailures` failures, oldest first.
  const failures = new Map<string, number[]>();

  const recent = (address: string): number[] => {
    const times = failures.get(address);
    if (!times) return [];
    const cutoff = now() - WINDOW_MS;
    while (times.length > 0 && times[0]! <= cutoff) times.shift();
    if (times.length === 0) failures.delete(address);
    return times;
  };

  return {
    blockedFor(address) {
      if (maxFailures === 0) return 0;
      const times = recent(address);
      return times.length >= maxFailures ? times[0]! + WINDOW_MS - now() : 0;
    },
    fail(address) {
      if (maxFailures === 0) return;
      const times = recent(address);
      times.push(now());
      if (times.length > maxFailures) times.shift();
      // Re-inserting keeps the map in order of last failure, so the first key is the stalest.
      failures.delete(address);
      if (failures.size >= maxAddresses) failures.delete(failures.keys().next().value!);
      failures.set(address, times);
    },
    get size() {
      return failures.size;
    },
  };
}
