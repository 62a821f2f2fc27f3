// The benchmarks' machine-readable result: one JSON line with every figure, its unit and the
// goal beside it (docs: README "Performance"). Goals are reported, never enforced: the bench
// exits 0 whatever it measured (CI machines are noisy); it fails loudly only when it breaks.

/** A figure's goal: at most or at least `limit`. */
export interface Goal {
  atMost?: number;
  atLeast?: number;
}

export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** "<= 0.5", ">= 300", or null for a figure without a goal. */
  goal: string | null;
  met: boolean | null;
}

const round = (value: number) => (Number.isFinite(value) ? Math.round(value * 1000) / 1000 : value);

export function figure(name: string, value: number, unit: string, goal?: Goal): Figure {
  if (goal?.atMost !== undefined) return { name, value: round(value), unit, goal: `<= ${goal.atMost}`, met: value <= goal.atMost };
  if (goal?.atLeast !== undefined) return { name, value: round(value), unit, goal: `>= ${goal.atLeast}`, met: value >= goal.atLeast };
  return { name, value: round(value), unit, goal: null, met: null };
}

/** True when BENCH_SMOKE=1: short runs that only prove the benchmark still works (CI). */
export const SMOKE = process.env.BENCH_SMOKE === '1';

/** The last line of the output: `{"bench": ..., "smoke": ..., "figures": [...]}`. */
export function printReport(bench: string, figures: Figure[]): void {
  for (const f of figures) {
    if (!Number.isFinite(f.value)) throw new Error(`figure ${f.name} is not a number (${f.value})`);
  }
  process.stdout.write(`${JSON.stringify({ bench, smoke: SMOKE, at: new Date().toISOString(), figures })}\n`);
}
