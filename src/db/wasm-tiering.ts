// V8 runs WebAssembly first as quickly compiled code and recompiles each function that has run
// long enough (its "tiering budget") with its optimising compiler, on background threads.
// PGlite's start runs enough of its 9 MB module once to send hundreds of functions there:
// 300-450 ms of CPU during the start and just after it, taken from the main thread loading the
// HTTP stack on a 2-core machine, for code that mostly never runs again. A module takes its
// functions' budgets from the flag when it is instantiated, so PGlite is started with a budget a
// hundred times V8's and V8's own is put back at once, for what is instantiated later (undici's
// HTTP parser). Measured (docs/performance.md): the start-up compiles mostly gone, and a
// statement run over and over is optimised after a few thousand runs instead of a few hundred;
// a thousand times V8's saved more of the start but left statements 6-12% slower for far longer.
import v8 from 'node:v8';

/** V8's default budget, as `node --v8-options` prints it: 1.8 M up to V8 11 (Node 20), 13 M since V8 12. */
export function defaultTieringBudget(v8Version: string = process.versions.v8): number {
  return Number(v8Version.split('.')[0]) >= 12 ? 13_000_000 : 1_800_000;
}

/** Runs `start` (which instantiates PGlite) with the start-up budget, then V8's again; an operator's own `--wasm-tiering-budget` is left alone. */
export async function withStartupTiering<T>(start: () => Promise<T>): Promise<T> {
  if (process.execArgv.some((arg) => arg.startsWith('--wasm-tiering-budget'))) return start();
  v8.setFlagsFromString(`--wasm-tiering-budget=${100 * defaultTieringBudget()}`);
  try {
    return await start();
  } finally {
    v8.setFlagsFromString(`--wasm-tiering-budget=${defaultTieringBudget()}`);
  }
}
