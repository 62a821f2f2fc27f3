// Waiting for a background run to end, for a request that asked to (a rerun with `wait: true`):
// woken by the run's event notices, and polling as well, since a notice may be lost.
import type { InstanceService } from '../../services/instances.js';
import type { EventWakeups } from '../../services/instance-events.js';

export interface WaitDeps {
  instances: Pick<InstanceService, 'statusOf'>;
  wakeups: EventWakeups;
  pollMs: number;
}

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/** True once instance `id` has finished; false when `timeoutMs` passed or `signal` aborted first. */
export async function waitUntilFinished(deps: WaitDeps, id: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let wake: (() => void) | null = null;
  // A notice during the read below is kept (nobody is waiting to be woken then): the read may
  // have missed what it announced, so the wait after it is skipped.
  let noticed = false;
  const unwatch = deps.wakeups.watch(id, () => {
    noticed = true;
    wake?.();
  });
  try {
    while (!signal.aborted) {
      noticed = false;
      const row = await deps.instances.statusOf(id);
      if (!row || FINISHED.has(row.status)) return row !== null;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      if (noticed) continue;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          wake = null;
          resolve();
        };
        const timer = setTimeout(done, Math.min(deps.pollMs, left));
        wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
    return false;
  } finally {
    unwatch();
  }
}
