// How a background run can end without its own doing: its process stopped (once too often),
// it lost its lease to another process, or its process shut down and handed it back.
import { ApiError } from '../errors.js';

export const RUN_INTERRUPTED = 'run_interrupted';

export const runInterrupted = (message: string) => new ApiError(503, 'api_error', RUN_INTERRUPTED, message);

/** This process may no longer write for the run: another one holds it now (or nobody should). */
export const leaseLost = () =>
  runInterrupted('The run was interrupted: this process lost its lease on it (it stalled or lost the database).');

/** Shutdown: the run goes back to pending, for another process to resume. */
export const runReleased = () => new ApiError(503, 'api_error', 'run_released', 'The process shut down; the run resumes in another process.');

export const isReleased = (error: unknown): boolean => error instanceof ApiError && error.code === 'run_released';

export const interruptedMessages = {
  sync: 'The run was interrupted: the process serving this synchronous request stopped before the run finished.',
  /** The SQL puts the number of attempts in place of `{n}`. */
  async: (attempts: number | '{n}') => `The run was interrupted: the process running it stopped ${attempts} times.`,
};
