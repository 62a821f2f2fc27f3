// Cancellation scopes. Many operations that must stop when one long-lived signal aborts (the
// model calls of a ladder run, the calls made under one caller's signal) would each add a
// listener to it, and past ten Node warns of a leak (MaxListenersExceededWarning). A parent
// signal carries one listener however many operations run under it: that listener fans out to
// the callbacks registered with `whenAborted`, an abort scope's among them.

export interface AbortScope {
  /** A handle, not an AbortSignal (an EventTarget, microseconds per scope): `realSignal` makes one where an API needs it. */
  readonly signal: CallerGone;
  abort(reason?: unknown): void;
  /** Unlinks the scope from its parent; call it when the operation ends, however it ends. */
  dispose(): void;
}

type OnAbort = (reason: unknown) => void;

/**
 * "The caller left", for a request that is usually answered long before: what an
 * AbortController gives, without building an AbortSignal (an EventTarget: microseconds of CPU
 * and about a kilobyte) for every request. `signal` makes a real one for the rare code that needs it.
 */
export class CallerGone {
  aborted = false;
  reason: unknown = undefined;
  #callbacks: Set<OnAbort> | null = null;
  #controller: AbortController | null = null;

  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const callbacks = this.#callbacks;
    this.#callbacks = null;
    if (callbacks) for (const callback of callbacks) callback(reason);
    this.#controller?.abort(reason);
  }

  /** A real AbortSignal that aborts with this handle (made on first use). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.reason);
    }
    return this.#controller.signal;
  }

  /** @internal `whenAborted`'s registration for a handle. */
  add(onAbort: OnAbort): void {
    (this.#callbacks ??= new Set()).add(onAbort);
  }

  /** @internal `forget`'s. */
  delete(onAbort: OnAbort): void {
    this.#callbacks?.delete(onAbort);
  }
}

/** What a call may be cancelled by: a signal, or the cheaper handle of a caller that may leave. */
export type CallerSignal = AbortSignal | CallerGone;

/** The AbortSignal for an API that takes only that (timers, undici). */
export function realSignal(signal: CallerSignal): AbortSignal;
export function realSignal(signal: CallerSignal | undefined): AbortSignal | undefined;
export function realSignal(signal: CallerSignal | undefined): AbortSignal | undefined {
  return signal instanceof CallerGone ? signal.signal : signal;
}

const waiting = new WeakMap<AbortSignal, Set<OnAbort>>();

/**
 * Calls `onAbort` (once) when `parent` aborts, through the parent's one shared listener; the
 * caller checks `parent.aborted` first. `forget(parent, onAbort)` unlinks it. Cheaper than an
 * AbortController per operation when the operation can be stopped directly (a vendor call).
 */
export function whenAborted(parent: CallerSignal, onAbort: OnAbort): void {
  if (parent instanceof CallerGone) return parent.add(onAbort);
  let callbacks = waiting.get(parent);
  if (!callbacks) {
    const created = new Set<OnAbort>();
    callbacks = created;
    waiting.set(parent, created);
    parent.addEventListener('abort', () => {
      waiting.delete(parent);
      for (const callback of created) callback(parent.reason);
      created.clear();
    }, { once: true });
  }
  callbacks.add(onAbort);
}

export function forget(parent: CallerSignal, onAbort: OnAbort): void {
  if (parent instanceof CallerGone) return parent.delete(onAbort);
  waiting.get(parent)?.delete(onAbort);
}

/** A scope that aborts when `parent` does, or when aborted itself. */
export function abortScope(parent?: CallerSignal): AbortScope {
  const handle = new CallerGone();
  const abort: OnAbort = (reason) => handle.abort(reason);
  const scope: AbortScope = { signal: handle, abort, dispose: () => {} };
  if (!parent) return scope;
  if (parent.aborted) {
    handle.abort(parent.reason);
    return scope;
  }
  whenAborted(parent, abort);
  scope.dispose = () => forget(parent, abort);
  return scope;
}
