// A run's timeline built from its events: one row per execution of a step (a step runs once
// per pass, and again in each recursion child), one bar per node placed by its start and end.
// Pure data, no DOM, so it is tested on its own.

import { nanos } from './format.js';

export type NodeOutcome = 'succeeded' | 'pruned' | 'failed';

export interface NodeBar {
  node: number;
  outcome: NodeOutcome;
  /** ms since the epoch; start = when the event was recorded minus the call's latency. */
  start: number;
  end: number;
  latencyMs: number;
  provider: string | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  costUsd: number | null;
  prompt: string | null;
  output: string | null;
  error: string | null;
  /** A rerun's call that reused its source run's identical one: no vendor call, no cost. */
  reused: boolean;
}

export interface StepRow {
  /** Unique per row: the same step at the same pass and depth can run more than once (recursion). */
  key: string;
  step: string;
  pass: number;
  depth: number;
  group: string | null;
  start: number;
  end: number | null;
  /** Nodes kept by the step's gate, once the step completed. */
  survivors: number | null;
  nodes: NodeBar[];
}

export interface Timeline {
  rows: StepRow[];
  /** When the run started (its first event), ms since the epoch. */
  start: number | null;
  /** When the run ended (its terminal event), or null while it runs. */
  end: number | null;
  /** The terminal event's type and data (the instance as GET shows it). */
  terminal: { type: string; instance: Record<string, unknown> } | null;
  /** True when the history was rebuilt from a stored trace (times are estimates). */
  reconstructed: boolean;
  lastSeq: number;
}

export interface TimelineEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export const TERMINAL_TYPES = new Set(['instance.completed', 'instance.failed', 'instance.cancelled']);

export function emptyTimeline(): Timeline {
  return { rows: [], start: null, end: null, terminal: null, reconstructed: false, lastSeq: 0 };
}

const num = (v: unknown, fallback = 0) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const str = (v: unknown) => (typeof v === 'string' ? v : null);
const timeOf = (data: Record<string, unknown>) => {
  const at = typeof data.at === 'string' ? Date.parse(data.at) : NaN;
  return Number.isNaN(at) ? Date.now() : at;
};

/** Applies one event (in seq order) to the timeline; events already applied are ignored. */
export function applyEvent(timeline: Timeline, event: TimelineEvent): Timeline {
  if (event.seq <= timeline.lastSeq) return timeline;
  timeline.lastSeq = event.seq;
  const { data } = event;
  if (data.reconstructed === true) timeline.reconstructed = true;
  if (TERMINAL_TYPES.has(event.type)) {
    timeline.terminal = { type: event.type, instance: data };
    const finished = str(data.finished_at);
    timeline.end = finished ? Date.parse(finished) : Date.now();
    timeline.start ??= str(data.started_at) ? Date.parse(data.started_at as string) : timeline.end;
    return timeline;
  }
  const at = timeOf(data);
  timeline.start = timeline.start === null ? at : Math.min(timeline.start, at);
  if (event.type === 'step.started') {
    openRow(timeline, data, at);
  } else if (event.type === 'node.completed' || event.type === 'node.failed') {
    const row = currentRow(timeline, data) ?? openRow(timeline, data, at - num(data.latency_ms));
    const latencyMs = num(data.latency_ms);
    const failed = event.type === 'node.failed';
    const bar: NodeBar = {
      node: num(data.node, row.nodes.length + 1),
      outcome: failed ? 'failed' : data.survived === false ? 'pruned' : 'succeeded',
      start: at - latencyMs,
      end: at,
      latencyMs,
      provider: str(data.provider),
      usage: isUsage(data.usage) ? data.usage : null,
      costUsd: typeof data.cost_usd === 'number' ? data.cost_usd : null,
      prompt: str(data.prompt_excerpt),
      output: str(data.output_excerpt),
      error: failed ? (str(data.error) ?? JSON.stringify(data.error ?? 'failed')) : null,
      reused: data.reused === true,
    };
    row.nodes = [...row.nodes.filter((n) => n.node !== bar.node), bar].sort((a, b) => a.node - b.node);
    row.start = Math.min(row.start, bar.start);
  } else if (event.type === 'step.completed') {
    const row = currentRow(timeline, data) ?? openRow(timeline, data, at);
    row.end = at;
    const survivors = data.survivors;
    row.survivors = Array.isArray(survivors) ? survivors.length : typeof survivors === 'number' ? survivors : null;
  }
  return timeline;
}

const baseKey = (data: Record<string, unknown>) => `${num(data.depth)}|${num(data.pass, 1)}|${String(data.step)}`;

/** The latest row of this step, pass and depth that has not completed (or the latest at all). */
function currentRow(timeline: Timeline, data: Record<string, unknown>): StepRow | undefined {
  const key = baseKey(data);
  const rows = timeline.rows.filter((r) => r.key.startsWith(`${key}#`));
  return rows.findLast((r) => r.end === null) ?? rows.at(-1);
}

function openRow(timeline: Timeline, data: Record<string, unknown>, at: number): StepRow {
  const base = baseKey(data);
  const occurrence = timeline.rows.filter((r) => r.key.startsWith(`${base}#`)).length + 1;
  const row: StepRow = {
    key: `${base}#${occurrence}`,
    step: String(data.step),
    pass: num(data.pass, 1),
    depth: num(data.depth),
    group: str(data.group),
    start: at,
    end: null,
    survivors: null,
    nodes: [],
  };
  timeline.rows.push(row);
  return row;
}

function isUsage(v: unknown): v is NodeBar['usage'] & object {
  return typeof v === 'object' && v !== null && typeof (v as { total_tokens?: unknown }).total_tokens === 'number';
}

/** Totals over the nodes shown so far. */
export function totals(timeline: Timeline): { nodes: number; tokens: number; costUsd: number; reused: number } {
  let nodes = 0;
  let tokens = 0;
  let costNanos = 0;
  let reused = 0;
  for (const row of timeline.rows) {
    for (const bar of row.nodes) {
      nodes++;
      if (bar.reused) reused++;
      tokens += bar.usage?.total_tokens ?? 0;
      // Summed in whole nanos: adding the dollars as doubles would show float noise.
      costNanos += nanos(bar.costUsd ?? 0);
    }
  }
  return { nodes, tokens, costUsd: costNanos / 1e9, reused };
}

/** Evenly spaced, round tick positions (ms from the start) for an axis `span` ms long. */
export function axisTicks(span: number, target = 6): number[] {
  if (span <= 0) return [0];
  const rough = span / target;
  const steps = [100, 200, 250, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000];
  const step = steps.find((s) => s >= rough) ?? steps.at(-1)!;
  const ticks: number[] = [];
  for (let t = 0; t <= span; t += step) ticks.push(t);
  return ticks;
}
