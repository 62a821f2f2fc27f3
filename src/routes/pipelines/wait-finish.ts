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
  const notices = deps.wakeups.watch(id);
  try {
    while (!signal.aborted) {
      const row = await deps.instances.statusOf(id);
      if (!row || FINISHED.has(row.status)) return row !== null;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await notices.wait(Math.min(deps.pollMs, left), signal);
    }
    return false;
  } finally {
    notices.stop();
  }
}
