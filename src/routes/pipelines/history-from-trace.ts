// The events of a finished run that has none recorded (one that ended before runs wrote events),
// rebuilt from its stored trace so that its timeline can still be shown. The trace has each
// call's latency but no clock times: steps are laid end to end from started_at, the nodes of a
// step side by side. Every rebuilt event says so with `reconstructed: true`.
import type { StepTrace } from '../../ladders/engine/run-types.js';
import { nanosToUsd } from '../../money.js';
import type { InstanceRow } from '../../services/instances.js';

export interface StreamEvent {
  type: string;
  data: Record<string, unknown>;
  at: Date;
}

const EXCERPT_CHARS = 4000;

export function historyFromTrace(row: InstanceRow): StreamEvent[] {
  const trace = (row.trace ?? []) as StepTrace[];
  let clock = (row.startedAt ?? row.createdAt).getTime();
  const events: StreamEvent[] = [{ type: 'instance.started', data: { reconstructed: true }, at: new Date(clock) }];
  for (const step of trace) {
    const where = { step: step.stepId, pass: step.pass, depth: step.depth };
    const started = clock;
    events.push({ type: 'step.started', data: { ...where, ...(step.groupId ? { group: step.groupId } : {}), reconstructed: true }, at: new Date(started) });
    let longest = 0;
    for (const node of step.nodes) {
      longest = Math.max(longest, node.latencyMs);
      const at = new Date(started + node.latencyMs);
      const data = node.error
        ? { ...where, node: node.node, error: node.error, latency_ms: node.latencyMs }
        : {
            ...where,
            node: node.node,
            provider: node.provider,
            latency_ms: node.latencyMs,
            usage: node.usage,
            cost_usd: nanosToUsd(node.costNanos),
            survived: node.survived,
            output_excerpt: node.output.slice(0, EXCERPT_CHARS),
            prompt_excerpt: node.prompt.slice(0, EXCERPT_CHARS),
          };
      events.push({ type: node.error ? 'node.failed' : 'node.completed', data: { ...data, reconstructed: true }, at });
    }
    clock = started + longest;
    const survivors = step.nodes.filter((n) => n.survived).map((n) => n.node);
    events.push({ type: 'step.completed', data: { ...where, survivors, reconstructed: true }, at: new Date(clock) });
  }
  return events.sort((a, b) => a.at.getTime() - b.at.getTime());
}
