// Everything a held run writes: checkpoints, events, progress and its outcome. Every write is
// one statement that first updates the instance row WHERE its fence is still ours, so a process
// that lost the run can no longer change anything (the row lock orders it after a takeover).
// Writes of one run go out one at a time, so event numbers commit in order; each statement that
// writes events also announces them, which wakes the streams watching: the run's end always
// (EVENTS_NOTICE_CTE), its calls and steps only while a live stream watches (WATCHED_EVENTS_NOTICE_CTE).
//
// Group commit: a finished call's checkpoint is queued and the run goes on; queued checkpoints
// go out together, in one statement, after at most CHECKPOINT_BATCH_MS (calls finishing close
// together: a fan-out step), or sooner when the run needs them stored:
// - a background run makes no model call before every finished call of it is stored or in the
//   statement under way (`beforeCall()`): while its lease surely holds, the next call goes out
//   alongside the write of the calls before it (a crash during that write repays those calls,
//   as it would have before, and the one in flight, which was never finished); otherwise it
//   waits until they are stored. A run resumed elsewhere never pays twice for a call it stored,
//   and no call goes out once another process may have taken the run over;
// - the outcome takes what is still queued into its own statement: a run's last checkpoints
//   (a one-call run's only one) cost no statement of their own.
// A synchronous run is never resumed (its process gone, it fails: see claim.ts), so its calls do
// not wait (`pipelined`); its client is answered once the outcome, with what was left, is stored.
import type { Database } from '../db/client.js';
import type { ApiError } from '../errors.js';
import type { CallDetail, NodePlace, RecordedCall, RunJournal, RunProgress, StepPlace, StepTrace } from '../ladders/engine/run-types.js';
import { nanosToUsd } from '../money.js';
import type { Usage } from '../providers/types.js';
import { EVENTS_NOTICE_CTE, WATCHED_EVENTS_NOTICE_CTE } from '../services/instance-events.js';
import { webhookEnqueueCte } from '../webhooks/enqueue.js';
import { storableJson } from '../unicode.js';
import type { RecordedCalls } from './checkpoints.js';
import { leaseLost } from './errors.js';

/** Output and prompt excerpts in events are cut to this many characters. */
export const EVENT_EXCERPT_CHARS = 500;
/** Events that no checkpoint carries are sent after at most this delay. */
const EVENT_FLUSH_MS = 50;
/** A run waits for its checkpoints once this many are queued (a database slower than its calls). */
const MAX_QUEUED_CHECKPOINTS = 64;
/** Checkpoints (and events) are gathered at most this long into one write. */
const CHECKPOINT_BATCH_MS = 10;

export interface HeldRun {
  id: string;
  fence: number;
}

interface EventRow {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

interface Checkpoint {
  key: string;
  call: RecordedCall;
  /** Of the model and whole prompt, for a later rerun to find it (src/worker/reuse.ts). */
  promptHash: string | undefined;
}

export type Finish =
  | { status: 'completed'; answer: string; progress: RunProgress }
  | { status: 'failed' | 'cancelled'; error: ApiError; progress: RunProgress };

/** Stores checkpoints, given as a JSON array of rows in parameter `$n`, for the instance `held` returns. */
const insertCalls = (n: number) => `
  INSERT INTO instance_calls (instance_id, call_key, output, usage, cost_nanos, provider, latency_ms, prompt_hash, reused_from, saved_nanos)
  SELECT held.id, c.call_key, c.output, c.usage, c.cost_nanos, c.provider, c.latency_ms, c.prompt_hash, c.reused_from, c.saved_nanos
  FROM held, jsonb_to_recordset($${n}::text::jsonb)
    AS c(call_key text, output text, usage jsonb, cost_nanos bigint, provider text, latency_ms int, prompt_hash text, reused_from text, saved_nanos bigint)
  ON CONFLICT DO NOTHING
`;

const FLUSH_SQL = `
WITH held AS (
  UPDATE instances SET
    steps_total = $3,
    steps_completed = greatest(steps_completed, $4),
    model_calls = greatest(model_calls, $5),
    spend_nanos = greatest(spend_nanos, $6::bigint),
    usage = coalesce($7::text::jsonb, usage)
  WHERE id = $1 AND fence = $2 AND status = 'running'
  RETURNING id, watchers
), calls AS (${insertCalls(8)}), events AS (
  INSERT INTO instance_events (instance_id, seq, type, data)
  SELECT held.id, e.seq, e.type, e.data FROM held, jsonb_to_recordset($9::text::jsonb) AS e(seq int, type text, data jsonb)
  RETURNING instance_id
), ${WATCHED_EVENTS_NOTICE_CTE}
SELECT (SELECT count(*)::int FROM held) AS held, (SELECT count(*)::int FROM notice) AS notified`;

const FINISH_SQL = `
WITH held AS (
  UPDATE instances SET
    status = $3, answer = $4::text, error = $5::text::jsonb, usage = $6::text::jsonb, spend_nanos = $7::bigint,
    model_calls = $8::int, trace = $9::text::jsonb, steps_completed = greatest(steps_completed, $10),
    finished_at = now(), claimed_by = NULL, lease_expires_at = NULL
  WHERE id = $1 AND fence = $2 AND status = 'running'
  RETURNING id, finished_at, account_id, status
), calls AS (${insertCalls(12)}), events AS (
  INSERT INTO instance_events (instance_id, seq, type, data)
  SELECT held.id, e.seq, e.type, e.data FROM held, jsonb_to_recordset($11::text::jsonb) AS e(seq int, type text, data jsonb)
  RETURNING instance_id
), ${webhookEnqueueCte('held') /* webhooks: the run's deliveries, queued with its outcome (docs/webhooks.md) */}, ${EVENTS_NOTICE_CTE}
SELECT finished_at, (SELECT count(*)::int FROM notice) AS notified FROM held`;

// A release is not a failed attempt: the attempt is given back, and the fence moves on so
// that nothing this process still had in flight can land.
const RELEASE_SQL = `
WITH held AS (
  UPDATE instances SET status = 'pending', claimed_by = NULL, lease_expires_at = NULL,
    attempts = greatest(attempts - 1, 0), fence = fence + 1
  WHERE id = $1 AND fence = $2 AND status = 'running'
  RETURNING id
), events AS (
  INSERT INTO instance_events (instance_id, seq, type, data)
  SELECT held.id, e.seq, e.type, e.data FROM held, jsonb_to_recordset($3::text::jsonb) AS e(seq int, type text, data jsonb)
  RETURNING instance_id
), ${EVENTS_NOTICE_CTE}
SELECT (SELECT count(*)::int FROM held) AS held, (SELECT count(*)::int FROM notice) AS notified`;

const excerpt = (text: string) => text.slice(0, EVENT_EXCERPT_CHARS);
// PostgreSQL stores neither NUL nor lone surrogates; one odd character in an output must not fail a write.
// JSON.stringify writes both as escapes (\u0000, \udXXX), so one scan of its text finds them; the
// rare text that has one (or a literal `\u0000` written by someone, harmless) is made storable
// and written again, where copying every value first cost 5 µs a call.
const MAYBE_UNSTORABLE_JSON = /\\u0000|\\ud[89a-f]/i;
const json = (value: unknown) => {
  const text = JSON.stringify(value);
  return MAYBE_UNSTORABLE_JSON.test(text) ? JSON.stringify(storableJson(value)) : text;
};

export class InstanceJournal implements RunJournal {
  /** True once a write found the row no longer ours, or the database failed a write. */
  lost = false;
  private seq: number;
  private pending: EventRow[] = [];
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private stepsCompleted = 0;
  private progress: RunProgress | null = null;
  /** Checkpoints waiting for the next write, and that write (which takes every one queued when it starts). */
  private queued: Checkpoint[] = [];
  private queuedWrite: Promise<void> | null = null;
  /** The gathering window, until the queued checkpoints are written. */
  private batchTimer: NodeJS.Timeout | null = null;
  readonly recorded?: (key: string) => Promise<RecordedCall | undefined>;

  constructor(
    private readonly database: Pick<Database, 'query' | 'queryRelaxed'>,
    private readonly run: HeldRun,
    options: {
      lastSeq: number;
      stepsTotal: number;
      recorded: RecordedCalls | null;
      onLost: (error: unknown) => void;
      /** Its calls never wait for checkpoints (a synchronous run, which is never resumed): `beforeCall()` is a no-op. */
      pipelined?: boolean;
      /**
       * True while no other process can take the run over (src/worker/lease.ts): a call may then
       * go out while the checkpoints before it are being written. Without it, calls wait for them.
       */
      surelyHeld?: () => boolean;
    },
  ) {
    this.seq = options.lastSeq;
    this.pipelined = options.pipelined ?? false;
    this.surelyHeld = options.surelyHeld ?? (() => false);
    this.stepsTotal = options.stepsTotal;
    this.onLost = options.onLost;
    const recorded = options.recorded;
    if (recorded && recorded.size > 0) this.recorded = (key) => recorded.get(key);
  }

  private readonly stepsTotal: number;
  private readonly onLost: (error: unknown) => void;
  private readonly pipelined: boolean;
  private readonly surelyHeld: () => boolean;

  /** Queues an event; it goes out with the next checkpoint, or on its own shortly. */
  event(type: string, data: Record<string, unknown>): void {
    this.pending.push({ seq: ++this.seq, type, data });
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.write(() => this.flush([])).catch(() => {});
    }, EVENT_FLUSH_MS);
  }

  stepStarted(place: StepPlace): void {
    this.event('step.started', { step: place.stepId, pass: place.pass, depth: place.depth, ...(place.groupId ? { group: place.groupId } : {}) });
  }

  stepCompleted(place: StepPlace, survivors: number[]): void {
    this.stepsCompleted += 1;
    this.event('step.completed', { step: place.stepId, pass: place.pass, depth: place.depth, survivors });
  }

  callFailed(place: NodePlace, detail: { prompt: string; error: string; latencyMs: number }): void {
    this.event('node.failed', Object.assign(nodeData(place), { latency_ms: detail.latencyMs, prompt_excerpt: excerpt(detail.prompt), error: detail.error }));
  }

  /** Queues the checkpoint and its event, to go out with those of calls finishing alongside; the run goes on. */
  callCompleted(place: NodePlace, call: RecordedCall, detail: CallDetail): Promise<void> {
    this.progress = detail.progress;
    this.pending.push({
      seq: ++this.seq,
      type: 'node.completed',
      // Object.assign rather than `{ ...nodeData(place), more }`: Node 20's V8 builds that on a slow path (µs per call).
      data: Object.assign(
        nodeData(place),
        {
          provider: call.provider,
          latency_ms: call.latencyMs,
          usage: call.usage,
          cost_usd: nanosToUsd(call.costNanos),
          survived: detail.survived,
          output_excerpt: excerpt(call.output),
          prompt_excerpt: excerpt(detail.prompt),
        },
        reusedData(call),
      ),
    });
    this.queued.push({ key: place.key, call, promptHash: detail.promptHash });
    if (this.queued.length >= MAX_QUEUED_CHECKPOINTS) return this.writeQueued();
    this.batchTimer ??= setTimeout(() => {
      this.batchTimer = null;
      // A failed write has already stopped the run (onLost); settle() and beforeCall() report it.
      this.writeQueued().catch(() => {});
    }, CHECKPOINT_BATCH_MS);
    return Promise.resolve();
  }

  /**
   * Before each model call of a background run: resolves once every finished call's checkpoint
   * is stored or in the write under way (starting the write of those queued now; while the lease
   * does not surely hold, once they are stored), so that a run resumed elsewhere replays them
   * rather than paying again; rejects when the run is no longer ours. Nothing for a synchronous run.
   */
  beforeCall(): Promise<void> | undefined {
    if (this.pipelined) return undefined;
    return this.beforeBackgroundCall();
  }

  /**
   * Waits for the write under way (usually over: it went alongside the last call), then starts
   * the write of what is queued; waits for that one too unless the lease surely holds now, as
   * the call goes out.
   */
  private async beforeBackgroundCall(): Promise<void> {
    await this.chain;
    if (this.lost) throw leaseLost();
    if (this.queued.length === 0) return;
    if (this.surelyHeld()) this.writeQueued().catch(() => {});
    else await this.settle();
  }

  /** Writes what is queued and waits for every write under way; throws when one found the run no longer ours. */
  async settle(): Promise<void> {
    if (this.queued.length > 0) this.writeQueued().catch(() => {});
    await this.chain;
    if (this.lost) throw leaseLost();
  }

  /** Records the outcome and the final event; resolves with the recorded finish time, or null when the run was no longer ours. */
  async finish(outcome: Finish, trace: StepTrace[]): Promise<Date | null> {
    const { progress } = outcome;
    const error = outcome.status === 'completed' ? null : outcome.error;
    // Checkpoints still queued go out with the outcome, in its statement (a write already under
    // way goes first); the final event goes only with the outcome.
    const final: EventRow = {
      seq: ++this.seq,
      type: `instance.${outcome.status}`,
      data: {
        model_calls: progress.modelCalls,
        usage: progress.usage,
        spend_usd: nanosToUsd(progress.spendNanos),
        ...(progress.reused ? { reused_calls: progress.reused.calls, reused_spend_usd: nanosToUsd(progress.reused.savedNanos) } : {}),
        ...(error ? { error: { status: error.statusCode, type: error.type, code: error.code, message: error.message } } : {}),
      },
    };
    try {
      let finishedAt: Date | null = null;
      await this.write(async () => {
        const events = [...this.takeEvents(), final];
        const calls = this.takeQueued();
        const [row] = await this.database.query<{ finished_at: Date | string }>(FINISH_SQL, [
          this.run.id,
          this.run.fence,
          outcome.status,
          outcome.status === 'completed' ? outcome.answer : null,
          error ? json({ status: error.statusCode, type: error.type, code: error.code, message: error.message }) : null,
          json(progress.usage),
          progress.spendNanos,
          progress.modelCalls,
          json(trace),
          this.stepsCompleted,
          json(events),
          json(calls),
        ], 'ladder_journal_finish');
        if (!row) throw leaseLost();
        finishedAt = new Date(row.finished_at);
      });
      return finishedAt;
    } catch {
      return null;
    }
  }

  /** Hands the run back as pending (shutdown); false when it was no longer ours. */
  async release(): Promise<boolean> {
    if (this.queued.length > 0) this.writeQueued().catch(() => {});
    const released: EventRow = { seq: ++this.seq, type: 'instance.released', data: {} };
    this.lost = false;
    try {
      await this.write(async () => {
        const [row] = await this.database.query<{ held: number }>(RELEASE_SQL, [this.run.id, this.run.fence, json([...this.takeEvents(), released])], 'ladder_journal_release');
        if (!row || row.held === 0) throw leaseLost();
      });
      return true;
    } catch {
      return false;
    } finally {
      this.lost = true;
    }
  }

  /**
   * Stops the delayed flush; queued events are dropped (the run is over here), gathered
   * checkpoints still go out (fenced), as they would have without the gathering window.
   */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.queued.length > 0) this.writeQueued().catch(() => {});
  }

  /** The write that takes every checkpoint queued when it starts (one already waiting to start takes new ones too). */
  private writeQueued(): Promise<void> {
    this.queuedWrite ??= this.write(() => {
      this.queuedWrite = null;
      return this.flush(this.takeQueued());
    });
    return this.queuedWrite;
  }

  /** The queued checkpoints as rows for a statement, leaving none queued and no gathering window open. */
  private takeQueued(): Record<string, unknown>[] {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = null;
    return this.queued.splice(0).map(({ key, call, promptHash }) => ({
      call_key: key,
      output: call.output,
      usage: call.usage,
      cost_nanos: call.costNanos,
      provider: call.provider,
      latency_ms: call.latencyMs,
      prompt_hash: promptHash ?? null,
      reused_from: call.reused?.from ?? null,
      saved_nanos: call.reused?.savedNanos ?? null,
    }));
  }

  private takeEvents(): EventRow[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const events = this.pending;
    this.pending = [];
    return events;
  }

  private async flush(calls: Record<string, unknown>[]): Promise<void> {
    const events = this.takeEvents();
    if (events.length === 0 && calls.length === 0) return;
    const progress = this.progress;
    // Relaxed: a checkpoint lost with the database server costs one call repeated, never a wrong outcome.
    const [row] = await this.database.queryRelaxed<{ held: number }>('ladder_journal_flush', FLUSH_SQL, [
      this.run.id,
      this.run.fence,
      this.stepsTotal,
      this.stepsCompleted,
      progress?.modelCalls ?? 0,
      progress?.spendNanos ?? 0,
      progress ? json(progress.usage satisfies Usage) : null,
      json(calls),
      json(events),
    ]);
    if (!row || row.held === 0) throw leaseLost();
  }

  // One write at a time, in order; after a lost write nothing more is sent.
  private write(work: () => Promise<void>): Promise<void> {
    const next = this.chain.then(async () => {
      if (this.lost) throw leaseLost();
      try {
        await work();
      } catch (error) {
        this.lost = true;
        this.onLost(error);
        throw leaseLost();
      }
    });
    this.chain = next.catch(() => {});
    return next;
  }
}

function nodeData(place: NodePlace): Record<string, unknown> {
  return { step: place.stepId, pass: place.pass, depth: place.depth, node: place.node, ...(place.groupId ? { group: place.groupId } : {}) };
}

// Only on a reused call, so the events of every other call keep their shape.
function reusedData(call: RecordedCall): Record<string, unknown> {
  return call.reused ? { reused: true, saved_usd: nanosToUsd(call.reused.savedNanos) } : {};
}
