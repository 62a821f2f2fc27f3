// Simulated runs for event-stream tests: instance rows and `instance_events` rows written
// straight into the database, as a runner in any process would write them.
import type { Database } from '../../src/db/client.js';
import { EVENTS_CHANNEL } from '../../src/services/instance-events.js';

export interface SimulatedInstance {
  accountId: string;
  author?: string;
  slug?: string;
  status?: 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';
  mode?: 'sync' | 'async';
  model?: string;
  knobs?: Record<string, number>;
  stepsTotal?: number;
  createdAt?: Date;
}

/** Inserts an instance row (running by default) and returns its id. */
export async function insertInstance(database: Database, input: SimulatedInstance): Promise<string> {
  const status = input.status ?? 'running';
  const [row] = await database.query<{ id: string }>(
    `insert into instances (ladder_version, author, slug, account_id, mode, model, input, knobs, status, started_at, steps_total, created_at)
     values (1, $1, $2, $3, $4, $5, 'Question?', $6, $7, $8, $9, $10) returning id`,
    [
      input.author ?? 'alice',
      input.slug ?? 'ladder',
      input.accountId,
      input.mode ?? 'async',
      input.model ?? 'gpt-4o-mini',
      JSON.stringify(input.knobs ?? {}),
      status,
      status === 'pending' ? null : new Date(),
      input.stepsTotal ?? 0,
      input.createdAt ?? new Date(),
    ],
  );
  return row!.id;
}

export interface EventSpec {
  type: string;
  data?: Record<string, unknown>;
}

/**
 * Appends events with the next seq numbers, in one transaction, as a runner does; `notify`
 * also announces them on the events channel.
 */
export async function appendEvents(database: Database, instanceId: string, events: EventSpec[], options: { notify?: boolean; at?: Date } = {}): Promise<number[]> {
  const seqs: number[] = [];
  for (const event of events) {
    const [row] = await database.query<{ seq: number }>(
      `insert into instance_events (instance_id, seq, type, data, created_at)
       select $1, coalesce(max(seq), 0) + 1, $2, $3, $4 from instance_events where instance_id = $1 returning seq`,
      [instanceId, event.type, JSON.stringify(event.data ?? {}), options.at ?? new Date()],
    );
    seqs.push(row!.seq);
  }
  if (options.notify) await database.query('select pg_notify($1, $2)', [EVENTS_CHANNEL, instanceId]);
  return seqs;
}

/** Records the run's outcome on its row, as a runner finishing it does. */
export async function finishInstance(
  database: Database,
  instanceId: string,
  outcome: { status: 'completed'; answer: string } | { status: 'failed' | 'cancelled'; error: { status: number; type: string; code: string; message: string } },
  extra: { usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number }; spendNanos?: number; modelCalls?: number; trace?: unknown[] } = {},
): Promise<void> {
  await database.query(
    `update instances set status = $2, answer = $3, error = $4, usage = $5, spend_nanos = $6, model_calls = $7, trace = $8,
       finished_at = now(), started_at = coalesce(started_at, now()) where id = $1`,
    [
      instanceId,
      outcome.status,
      outcome.status === 'completed' ? outcome.answer : null,
      outcome.status === 'completed' ? null : JSON.stringify(outcome.error),
      JSON.stringify(extra.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }),
      extra.spendNanos ?? 0,
      extra.modelCalls ?? 0,
      extra.trace ? JSON.stringify(extra.trace) : null,
    ],
  );
}

const usage = (p: number, c: number) => ({ prompt_tokens: p, completion_tokens: c, total_tokens: p + c });

/** A node that answered: `survived: false` is a node its step's gate pruned. */
export function nodeCompleted(step: string, pass: number, depth: number, node: number, survived = true, latency = 120): EventSpec {
  return {
    type: 'node.completed',
    data: {
      step, pass, depth, node, provider: 'openai', latency_ms: latency, usage: usage(40, 10), cost_usd: 0.0001, survived,
      output_excerpt: `${step} ${pass}.${depth}.${node} says ${survived ? 'YES' : 'NO'}`,
      prompt_excerpt: `Prompt of ${step} node ${node}`,
    },
  };
}

/**
 * The events of a run of a ladder with a gate (`judge`, continueIf YES, node 2 pruned), two
 * passes (a loops knob) and a recursion step (`deepen`, maxDepth 1): the child run at depth 1
 * runs every step once, between the recursion step and the steps after it.
 */
export function gateLoopRecursionRun(): EventSpec[] {
  const events: EventSpec[] = [{ type: 'instance.started', data: {} }];
  const step = (name: string, pass: number, depth: number, nodes: EventSpec[], survivors: number[]) => {
    events.push({ type: 'step.started', data: { step: name, pass, depth } }, ...nodes, {
      type: 'step.completed',
      data: { step: name, pass, depth, survivors },
    });
  };
  const passAt = (pass: number, depth: number) => {
    step('draft', pass, depth, [nodeCompleted('draft', pass, depth, 1)], [1]);
    step('judge', pass, depth, [nodeCompleted('judge', pass, depth, 1), nodeCompleted('judge', pass, depth, 2, false)], [1]);
    step('deepen', pass, depth, [nodeCompleted('deepen', pass, depth, 1)], [1]);
  };
  for (const pass of [1, 2]) {
    passAt(pass, 0);
    passAt(1, 1);
    step('polish', pass, 0, [nodeCompleted('polish', pass, 0, 1)], [1]);
  }
  events.push({ type: 'instance.completed', data: {} });
  return events;
}
