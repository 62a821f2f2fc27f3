// Cancellation scopes. Many operations that must stop when one long-lived signal aborts (the
// model calls of a ladder run, the calls made under one caller's signal) would each add a
// listener to it, and past ten Node warns of a leak (MaxListenersExceededWarning). A scope
// links to its parent through a single listener per parent that fans out to every live scope,
// so a parent carries one listener however many operations run under it.

export interface AbortScope {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
  /** Unlinks the scope from its parent; call it when the operation ends, however it ends. */
  dispose(): void;
}

const liveScopes = new WeakMap<AbortSignal, Set<AbortController>>();

/** A scope that aborts when `parent` does, or when aborted itself. */
export function abortScope(parent?: AbortSignal): AbortScope {
  const controller = new AbortController();
  const scope: AbortScope = { signal: controller.signal, abort: (reason) => controller.abort(reason), dispose: () => {} };
  if (!parent) return scope;
  if (parent.aborted) {
    controller.abort(parent.reason);
    return scope;
  }
  let scopes = liveScopes.get(parent);
  if (!scopes) {
    const created = new Set<AbortController>();
    scopes = created;
    liveScopes.set(parent, created);
    parent.addEventListener('abort', () => {
      liveScopes.delete(parent);
      for (const child of created) child.abort(parent.reason);
      created.clear();
    }, { once: true });
  }
  const registered = scopes;
  registered.add(controller);
  scope.dispose = () => void registered.delete(controller);
  return scope;
}
