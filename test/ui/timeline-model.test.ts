// The timeline the run page draws, built from a run's events.
import { describe, expect, it } from 'vitest';
import { applyEvent, axisTicks, emptyTimeline, totals, type TimelineEvent } from '../../ui/src/timeline-model.js';
import { gateLoopRecursionRun } from '../helpers/instance-events.js';

const T0 = Date.parse('2026-11-23T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

describe('timeline model', () => {
  it('has one row per step execution, in the order they started, with passes, depths and repeats apart', () => {
    const timeline = emptyTimeline();
    gateLoopRecursionRun().forEach((e, i) => applyEvent(timeline, { seq: i + 1, type: e.type, data: { ...e.data, at: at(i * 100) } }));
    expect(timeline.rows.map((r) => `${r.step}@${r.pass}.${r.depth}`)).toEqual([
      'draft@1.0', 'judge@1.0', 'deepen@1.0', 'draft@1.1', 'judge@1.1', 'deepen@1.1', 'polish@1.0',
      'draft@2.0', 'judge@2.0', 'deepen@2.0', 'draft@1.1', 'judge@1.1', 'deepen@1.1', 'polish@2.0',
    ]);
    expect(new Set(timeline.rows.map((r) => r.key)).size).toBe(14);
    const judge = timeline.rows[1]!;
    expect(judge.nodes.map((n) => [n.node, n.outcome])).toEqual([[1, 'succeeded'], [2, 'pruned']]);
    expect(judge.survivors).toBe(1);
    expect(timeline.terminal?.type).toBe('instance.completed');
    expect(totals(timeline)).toMatchObject({ nodes: 18, tokens: 18 * 50 });
  });

  it('places a node from its start (recorded time minus latency) to its end, and marks failures', () => {
    const timeline = emptyTimeline();
    const events: TimelineEvent[] = [
      { seq: 1, type: 'step.started', data: { step: 's', pass: 1, depth: 0, group: 'g', at: at(0) } },
      { seq: 2, type: 'node.failed', data: { step: 's', pass: 1, depth: 0, node: 2, error: 'HTTP 500', latency_ms: 300, at: at(400) } },
      { seq: 3, type: 'node.completed', data: { step: 's', pass: 1, depth: 0, node: 1, latency_ms: 900, survived: true, provider: 'openai', at: at(950) } },
    ];
    events.forEach((e) => applyEvent(timeline, e));
    applyEvent(timeline, events[1]!); // a repeated event changes nothing
    const row = timeline.rows[0]!;
    expect(row.group).toBe('g');
    expect(row.end).toBeNull();
    expect(row.nodes.map((n) => [n.node, n.outcome, n.start - T0, n.end - T0, n.error])).toEqual([
      [1, 'succeeded', 50, 950, null],
      [2, 'failed', 100, 400, 'HTTP 500'],
    ]);
  });

  it('marks the calls a rerun reused, and counts them', () => {
    const timeline = emptyTimeline();
    const node = (n: number, reused?: boolean) => ({ step: 's', pass: 1, depth: 0, node: n, latency_ms: 0, survived: true, cost_usd: 0, ...(reused ? { reused, saved_usd: 0.01 } : {}), at: at(10) });
    applyEvent(timeline, { seq: 1, type: 'node.completed', data: node(1, true) });
    applyEvent(timeline, { seq: 2, type: 'node.completed', data: node(2) });
    expect(timeline.rows[0]!.nodes.map((n) => [n.node, n.reused])).toEqual([[1, true], [2, false]]);
    expect(totals(timeline)).toMatchObject({ nodes: 2, reused: 1 });
  });

  it('chooses round axis ticks', () => {
    expect(axisTicks(10_000)).toEqual([0, 2000, 4000, 6000, 8000, 10_000]);
    expect(axisTicks(0)).toEqual([0]);
  });
});
