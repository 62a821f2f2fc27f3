// Counts the synchronous ladder runs as they end. A request refused before its instance
// existed is not a run, so only calls that reached `onInstance` are counted.
import { LadderRunError } from '../ladders/engine/interpreter.js';
import type { LadderRunner } from '../services/ladder-runs.js';
import type { Metrics } from './recorder.js';

export function instrumentRunner(runner: LadderRunner, metrics: Metrics): LadderRunner {
  if (!metrics.enabled) return runner;
  return {
    ...runner,
    async runSync(req) {
      let started = false;
      const onInstance = req.onInstance;
      try {
        const done = await runner.runSync({
          ...req,
          onInstance: (instance) => {
            started = true;
            onInstance?.(instance);
          },
        });
        metrics.runFinished('sync', 'completed');
        return done;
      } catch (error) {
        if (started) metrics.runFinished('sync', error instanceof LadderRunError && error.code === 'run_cancelled' ? 'cancelled' : 'failed');
        throw error;
      }
    },
  };
}
