// Cancellation scopes. Many operations that must stop when one long-lived signal aborts (the
// model calls of a ladder run, the calls made under one caller's signal) would each add a
// listener to it, and past ten Node warns of a leak (MaxListenersExceededWarning). A parent
// signal carries one listener however many operations run under it: that listener fans out to
// the callbacks registered with `whenAborted`, an abort scope's among them.

export interface AbortScope {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
  /** Unlinks the scope from its parent; call it when the operation ends, however it ends. */
  dispose(): void;
}

type OnAbort = (reason: unknown) => void;

const waiting = new WeakMap<AbortSignal, Set<OnAbort>>();

/**
 * Calls `onAbort` (once) when `parent` aborts, through the parent's one shared listener; the
 * caller checks `parent.aborted` first. `forget(parent, onAbort)` unlinks it. Cheaper than an
 * AbortController per operation when the operation can be stopped directly (a vendor call).
 */
export function whenAborted(parent: AbortSignal, onAbort: OnAbort): void {
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

export function forget(parent: AbortSignal, onAbort: OnAbort): void {
  waiting.get(parent)?.delete(onAbort);
}

/** A scope that aborts when `parent` does, or when aborted itself. */
export function abortScope(parent?: AbortSignal): AbortScope {
  const controller = new AbortController();
  const abort: OnAbort = (reason) => controller.abort(reason);
  const scope: AbortScope = { signal: controller.signal, abort, dispose: () => {} };
  if (!parent) return scope;
  if (parent.aborted) {
    controller.abort(parent.reason);
    return scope;
  }
  whenAborted(parent, abort);
  scope.dispose = () => forget(parent, abort);
  return scope;
}
