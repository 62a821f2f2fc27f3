// What stops one vendor stream: the caller leaving, and its time limits (first byte and the
// router's deadline while it opens, then the idle limit and the maximum duration). One timer
// keeps them all, set for the nearest limit: an AbortController and a timer per limit cost a
// stream's first token tens of microseconds (docs/performance.md, Streaming). A read only notes
// its time; the timer, when it fires early, is set again for what is then the nearest limit.
import { CallerGone, forget, whenAborted, type CallerSignal } from '../../abort-scope.js';
import type { CallDeadline } from '../call-vendor.js';
import { VendorError, transportError } from '../vendor-errors.js';

export interface StreamLimits {
  /** From sending the request to the first chunk (each attempt; fallback happens within it). */
  firstByteMs: number;
  /** Longest quiet time between two reads once the stream flows. */
  idleMs: number;
  /** Longest a stream may last from its request on. */
  maxDurationMs: number;
  /** Largest single event, in characters. */
  maxEventChars: number;
}

/** Why the stream stopped. */
const FIRST_BYTE = Symbol('first byte');
const IDLE = Symbol('idle');
const MAX_DURATION = Symbol('max duration');
const DEADLINE = Symbol('request deadline');
const CALLER = Symbol('caller left');

type Limit = typeof FIRST_BYTE | typeof IDLE | typeof MAX_DURATION | typeof DEADLINE;

export class StreamGuard {
  /** Aborts when the stream must stop, with the reason: the vendor's body stops with it. */
  readonly stop = new CallerGone();
  private timer: NodeJS.Timeout;
  /** When the timer fires (performance.now() time), and the limit it was set for while opening. */
  private firesAt: number;
  private readonly opening: Limit;
  private readonly endsAt: number;
  private flows = false;
  private lastRead = 0;
  private readonly onCallerAbort = () => this.stop.abort(CALLER);

  /** Starts the clock as the request leaves; `caller` must not have aborted yet. */
  constructor(private readonly limits: StreamLimits, private readonly caller: CallerSignal | undefined, private readonly deadline: CallDeadline | undefined) {
    const now = performance.now();
    this.endsAt = now + limits.maxDurationMs;
    // On a tie, the limit whose timer used to be set first: the router's deadline, then the first byte.
    let at = now + limits.firstByteMs;
    let limit: Limit = FIRST_BYTE;
    if (deadline && deadline.at <= at) {
      at = deadline.at;
      limit = DEADLINE;
    }
    if (this.endsAt < at) {
      at = this.endsAt;
      limit = MAX_DURATION;
    }
    this.opening = limit;
    this.firesAt = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - now));
    if (caller) whenAborted(caller, this.onCallerAbort);
  }

  /** The first chunk is in hand: from now on the idle limit and the maximum duration hold. */
  flowing(): void {
    this.flows = true;
    const now = performance.now();
    this.lastRead = now;
    const next = Math.min(now + this.limits.idleMs, this.endsAt);
    // With the usual limits (first byte no longer than idle) the opening's timer fires first, and fire() moves it on.
    if (this.firesAt <= next) return;
    clearTimeout(this.timer);
    this.arm(next, now);
  }

  /** A network read came: the idle limit counts from here. */
  read(): void {
    this.lastRead = performance.now();
  }

  /** The stream ended, however it ended: no limit holds any more, and the caller is let go. */
  end(): void {
    clearTimeout(this.timer);
    if (this.caller) forget(this.caller, this.onCallerAbort);
  }

  /** The error a stream stopped by this guard fails with. */
  error(provider: string): VendorError {
    const { limits } = this;
    switch (this.stop.reason) {
      case FIRST_BYTE: return transportError(provider, 'timeout', `no stream event within ${limits.firstByteMs} ms`);
      case IDLE: return transportError(provider, 'timeout', `the stream was idle for ${limits.idleMs} ms`);
      case MAX_DURATION: return transportError(provider, 'timeout', `the stream went past its maximum duration of ${limits.maxDurationMs} ms`);
      // The router tells a passed deadline (504) from the caller hanging up by `deadline.passed`.
      default: return transportError(provider, 'abort', 'request aborted by the caller');
    }
  }

  private fire(): void {
    if (!this.flows) return this.passed(this.opening);
    const now = performance.now();
    const idleAt = this.lastRead + this.limits.idleMs;
    // Within a millisecond counts as reached: a timer keeps whole milliseconds of the event loop's clock.
    if (this.endsAt - now < 1) return this.passed(MAX_DURATION);
    if (idleAt - now < 1) return this.passed(IDLE);
    this.arm(Math.min(idleAt, this.endsAt), now);
  }

  private arm(at: number, now: number): void {
    this.firesAt = at;
    this.timer = setTimeout(() => this.fire(), at - now);
  }

  private passed(limit: Limit): void {
    if (limit === DEADLINE) this.deadline!.passed = true;
    this.stop.abort(limit);
  }
}
