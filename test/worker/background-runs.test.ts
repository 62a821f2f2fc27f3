// Background runs through the real stack: claim, checkpoints and events, takeover after a
// lease expired, run_interrupted, fencing, lease loss, cancellation and retention.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nanosToUsd } from '../../src/money.js';
import { createPriceTable, costOf } from '../../src/pricing/prices.js';
import { InstanceJournal } from '../../src/worker/journal.js';
import { minimalLadder } from '../ladders/examples.js';
import { echo, MODEL, saveLadder, startHarness, userWithOpenAI, type Harness, type User } from '../e2e/ladder-harness.js';
import { callKeys, events, insertPending, instance, waitFor, waitForStatus } from '../helpers/instances.js';

const draftPrompt = (q: string) => `Question: ${q}\n\n[System Instruction]\nAnswer the question.`;
const refinePrompt = (q: string, draft: string) =>
  `Question: ${q}\n\nDraft: ${draft}\n\n[System Instruction]\nImprove the draft so that it answers the question better. Reply with the improved answer only.`;

describe('background runs', () => {
  let h: Harness;
  let user: User;
  let ladder: { id: string; version: number };
  const db = () => h.testApp.database;
  const pending = (input: string, extra: Record<string, unknown> = {}) =>
    insertPending(db(), { ladderId: ladder.id, ladderVersion: ladder.version, author: user.username, slug: 'minimal', accountId: user.id, input }, extra);

  beforeAll(async () => {
    // Every takeover here is of a lease the test sets to expired, and a lost lease is seen at the next
    // check (RUN_CANCEL_CHECK_MS); a short lease of the worker's own would only let a busy machine's
    // late heartbeat abort a run that should finish in one attempt.
    h = await startHarness({ WORKER_CONCURRENCY: '2', WORKER_POLL_MS: '200', RUN_LEASE_MS: '15000', RUN_CANCEL_CHECK_MS: '100' });
    user = await userWithOpenAI(h);
    ladder = await saveLadder(h, user, 'minimal', minimalLadder);
  });
  afterAll(() => h.close());
  afterEach(() => h.fake.reset());

  it('claims a pending instance at once and completes it, with checkpoints, events and progress', async () => {
    const id = await pending('What is 2+2?');
    await h.app.runNotices.pendingCreated();
    const row = await waitForStatus(db(), id, ['completed', 'failed']);
    const p1 = draftPrompt('What is 2+2?');
    const p2 = refinePrompt('What is 2+2?', echo(p1));
    expect(row).toMatchObject({
      status: 'completed', answer: echo(p2), error: null, attempts: 1, fence: 1, model_calls: 2,
      steps_total: 2, steps_completed: 2, claimed_by: null, lease_expires_at: null, mode: 'async',
    });
    expect(row.started_at).not.toBeNull();
    expect(row.trace.map((s: any) => s.stepId)).toEqual(['draft', 'refine']);
    expect(await callKeys(db(), id)).toEqual(['1.draft.1', '1.refine.1']);
    const log = await events(db(), id);
    expect(log.map((e) => [e.seq, e.type])).toEqual([
      [1, 'instance.started'], [2, 'step.started'], [3, 'node.completed'], [4, 'step.completed'],
      [5, 'step.started'], [6, 'node.completed'], [7, 'step.completed'], [8, 'instance.completed'],
    ]);
    const usage = { prompt_tokens: p1.length, completion_tokens: echo(p1).length, total_tokens: p1.length + echo(p1).length };
    expect(log[2]!.data).toEqual({
      step: 'draft', pass: 1, depth: 0, node: 1, provider: 'openai', latency_ms: expect.any(Number), usage,
      cost_usd: nanosToUsd(costOf(MODEL, usage, createPriceTable())), survived: true, output_excerpt: echo(p1), prompt_excerpt: p1,
    });
    expect(log[0]!.data).toEqual({ attempt: 1, resumed: false, recorded_calls: 0 });
    expect(log[3]!.data).toEqual({ step: 'draft', pass: 1, depth: 0, survivors: [1] });
    expect(log[7]!.data).toMatchObject({ model_calls: 2, usage: row.usage });
  });

  it('takes over a run whose lease expired and replays its checkpoints: no finished call is paid twice', async () => {
    // The dead process's lease runs out only once its checkpoint and events are in: a worker's sweep must not take the run over before.
    const id = await pending('Resume me', {
      status: 'running', attempts: 1, fence: 1, claimed_by: 'dead-process', started_at: new Date(Date.now() - 5000), lease_expires_at: new Date(Date.now() + 60_000),
    });
    const recordedUsage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    await db().query(
      `insert into instance_calls (instance_id, call_key, output, usage, cost_nanos, provider, latency_ms) values ($1, '1.draft.1', 'recorded draft', $2::text::jsonb, 250000000, 'openai', 42)`,
      [id, JSON.stringify(recordedUsage)],
    );
    await db().query(`insert into instance_events (instance_id, seq, type, data) values ($1, 1, 'instance.started', '{}'), ($1, 2, 'step.started', '{}'), ($1, 3, 'node.completed', '{}')`, [id]);
    await db().query(`update instances set lease_expires_at = now() - interval '1 second' where id = $1`, [id]);
    const row = await waitForStatus(db(), id, ['completed', 'failed']);
    const p2 = refinePrompt('Resume me', 'recorded draft');
    expect(h.fake.requests.map((r) => r.body.messages[0].content)).toEqual([p2]);
    expect(row).toMatchObject({ status: 'completed', answer: echo(p2), attempts: 2, fence: 2, model_calls: 2, steps_completed: 2 });
    expect(row.usage.total_tokens).toBe(15 + p2.length + echo(p2).length);
    expect(Number(row.spend_nanos)).toBe(250_000_000 + costOf(MODEL, { prompt_tokens: p2.length, completion_tokens: echo(p2).length, total_tokens: 0 }, createPriceTable()));
    expect(row.trace[0].nodes[0]).toMatchObject({ output: 'recorded draft', provider: 'openai', latencyMs: 42 });
    const log = await events(db(), id);
    expect(log[3]).toMatchObject({ seq: 4, type: 'instance.started', data: { attempt: 2, resumed: true, recorded_calls: 1 } });
    expect(log.at(-1)).toMatchObject({ seq: log.length, type: 'instance.completed' });
    expect(await callKeys(db(), id)).toEqual(['1.draft.1', '1.refine.1']);
  });

  it('fails a run whose process stopped RUN_MAX_ATTEMPTS times as run_interrupted (503), with what its checkpoints used', async () => {
    // The lease runs out only once the checkpoint is in, as in the test above.
    const id = await pending('Doomed', { status: 'running', attempts: 3, fence: 3, claimed_by: 'dead', started_at: new Date(), lease_expires_at: new Date(Date.now() + 60_000) });
    await db().query(
      `insert into instance_calls (instance_id, call_key, output, usage, cost_nanos, provider, latency_ms) values ($1, '1.draft.1', 'x', '{"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}', 500000000, 'openai', 1)`,
      [id],
    );
    await db().query(`update instances set lease_expires_at = now() - interval '1 second' where id = $1`, [id]);
    const row = await waitForStatus(db(), id, ['failed', 'completed']);
    expect(row).toMatchObject({
      status: 'failed', model_calls: 1, usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }, claimed_by: null, lease_expires_at: null,
      error: { status: 503, type: 'api_error', code: 'run_interrupted', message: 'The run was interrupted: the process running it stopped 3 times.' },
    });
    expect(row.finished_at).not.toBeNull();
    expect(Number(row.spend_nanos)).toBe(500_000_000);
    expect(h.fake.requests).toHaveLength(0);
    const log = await events(db(), id);
    expect(log.map((e) => e.type)).toEqual(['instance.failed']);
    // The event shows dollars, exactly: $0.5, not 0.500000000 nor a float's neighbour.
    expect(log[0]!.data).toMatchObject({ model_calls: 1, spend_usd: 0.5 });
  });

  it('fails a synchronous run whose process died as run_interrupted: nobody is left to answer', async () => {
    const id = await pending('Sync', { mode: 'sync', status: 'running', attempts: 1, fence: 1, claimed_by: 'dead', started_at: new Date(), lease_expires_at: new Date(Date.now() - 1) });
    const row = await waitForStatus(db(), id, ['failed', 'completed']);
    expect(row.error).toEqual({
      status: 503, type: 'api_error', code: 'run_interrupted',
      message: 'The run was interrupted: the process serving this synchronous request stopped before the run finished.',
    });
    expect(h.fake.requests).toHaveLength(0);
  });

  it('rejects every write of a holder whose fence is stale', async () => {
    const id = await pending('Stale', { status: 'running', attempts: 2, fence: 2, claimed_by: 'new-owner', started_at: new Date(), lease_expires_at: new Date(Date.now() + 60_000) });
    const lost: unknown[] = [];
    const stale = new InstanceJournal(db(), { id, fence: 1 }, { lastSeq: 0, stepsTotal: 2, recorded: null, onLost: (e) => lost.push(e) });
    const place = { stepId: 'draft', pass: 1, depth: 0, node: 1, key: '1.draft.1' };
    const call = { output: 'late', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, costNanos: 0, provider: 'openai', latencyMs: 1 };
    const progress = { usage: call.usage, spendNanos: 0, modelCalls: 1, trace: [] };
    await stale.callCompleted(place, call, { prompt: 'p', survived: true, progress });
    await expect(stale.beforeCall()).rejects.toMatchObject({ code: 'run_interrupted' });
    expect(lost).toHaveLength(1);
    expect(await stale.finish({ status: 'completed', answer: 'late', progress }, [])).toBeNull();
    expect(await stale.release()).toBe(false);
    expect(await callKeys(db(), id)).toEqual([]);
    expect(await events(db(), id)).toEqual([]);
    expect(await instance(db(), id)).toMatchObject({ status: 'running', fence: 2, claimed_by: 'new-owner', answer: null });
    await db().query(`update instances set status = 'failed', finished_at = now() where id = $1`, [id]);
  });

  it('a run that loses its lease stops at once and writes nothing more', async () => {
    h.fake.setDefault({ kind: 'delay', ms: 10_000 });
    const id = await pending('Lose it');
    await h.app.runNotices.pendingCreated();
    await waitFor(() => h.fake.requests.length === 1, 10_000, 'the first call');
    await waitFor(async () => (await events(db(), id)).length >= 2, 5_000, 'the first events');
    // Another process took it over.
    await db().query(`update instances set fence = fence + 1, claimed_by = 'thief' where id = $1`, [id]);
    const before = await events(db(), id);
    const taken = Date.now();
    await waitFor(() => h.fake.requests[0]!.abortedAt, 3_000, 'the vendor to see its connection closed');
    expect(h.fake.requests[0]!.abortedAt! - taken).toBeLessThan(1_500);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await instance(db(), id)).toMatchObject({ status: 'running', fence: 2, claimed_by: 'thief', finished_at: null });
    expect(await events(db(), id)).toEqual(before);
    await db().query(`update instances set status = 'failed', finished_at = now() where id = $1`, [id]);
  });

  it('a run this process still holds is neither taken over nor failed by its own sweep when its lease reads expired', async () => {
    h.fake.setDefault({ kind: 'delay', ms: 10_000 });
    const id = await pending('Still mine');
    await h.app.runNotices.pendingCreated();
    await waitFor(() => h.fake.requests.length === 1, 10_000, 'the first call');
    // As a renewal that comes late leaves it (an overloaded machine): the sweep must not see an abandoned run.
    await db().query(`update instances set lease_expires_at = now() - interval '10 seconds' where id = $1`, [id]);
    await h.app.workerPool.sweep();
    expect(await instance(db(), id)).toMatchObject({ status: 'running', attempts: 1, fence: 1, error: null });
    expect(h.fake.requests).toHaveLength(1);
    expect(h.fake.requests[0]!.clientClosed).toBe(false);
    await db().query('update instances set cancel_requested_at = now() where id = $1', [id]);
    await h.app.runNotices.cancelRequested(id);
    expect(await waitForStatus(db(), id, ['cancelled', 'failed', 'completed'])).toMatchObject({ status: 'cancelled', attempts: 1 });
  });

  for (const how of ['notice', 'flag only'] as const) {
    it(`cancels a running instance within a second (${how}): the vendor sees its connection closed, the row keeps what was used`, async () => {
      h.fake.script({ kind: 'delay', ms: 0 });
      h.fake.setDefault({ kind: 'delay', ms: 10_000 });
      const id = await pending(`Cancel ${how}`);
      await h.app.runNotices.pendingCreated();
      await waitFor(() => h.fake.requests.length === 2, 10_000, 'the second call');
      const asked = Date.now();
      await db().query('update instances set cancel_requested_at = now() where id = $1', [id]);
      if (how === 'notice') await h.app.runNotices.cancelRequested(id);
      await waitFor(() => h.fake.requests[1]!.abortedAt, 3_000, 'the vendor to see its connection closed');
      expect(h.fake.requests[1]!.abortedAt! - asked).toBeLessThan(1_000);
      const row = await waitForStatus(db(), id, ['cancelled', 'failed', 'completed']);
      expect(row).toMatchObject({ status: 'cancelled', model_calls: 2, error: { code: 'run_cancelled' }, answer: null });
      const p1 = draftPrompt(`Cancel ${how}`);
      expect(row.usage.total_tokens).toBe(p1.length + echo(p1).length);
      expect((await events(db(), id)).at(-1)).toMatchObject({ type: 'instance.cancelled' });
    });
  }

  it('fails a pending instance whose ladder was deleted as ladder_not_found', async () => {
    const other = await saveLadder(h, user, 'doomed', minimalLadder);
    const id = await insertPending(db(), { ladderId: other.id, ladderVersion: 1, author: user.username, slug: 'doomed', accountId: user.id, input: 'x' });
    await db().query('delete from ladders where id = $1', [other.id]);
    await h.app.runNotices.pendingCreated();
    const row = await waitForStatus(db(), id, ['failed', 'completed']);
    expect(row.error).toMatchObject({ status: 404, code: 'ladder_not_found' });
    expect(h.fake.requests).toHaveLength(0);
  });

  it('retention deletes old finished instances with their checkpoints and events, forgets old idempotency keys, and deletes raw usage rows, stored responses and audit entries past their periods', async () => {
    const now = new Date('2031-06-01T00:00:00Z');
    const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);
    // The calls of the tests before (a cancelled one is metered as it settles) may still wait in the
    // usage ledger's buffer: written now, or its interval's flush could land between the two jobs below.
    await h.app.usageLedger.flush();
    const old = await pending('old', { status: 'completed', finished_at: daysAgo(31), created_at: daysAgo(31), idempotency_key: 'k-old' });
    const young = await pending('young', { status: 'failed', finished_at: daysAgo(29), created_at: daysAgo(29), idempotency_key: 'k-young' });
    const fresh = await pending('fresh', { status: 'pending', created_at: daysAgo(0.5), idempotency_key: 'k-fresh' });
    const stuck = await pending('old but unfinished', { status: 'cancelled', created_at: daysAgo(40), finished_at: null });
    await db().query(`insert into instance_calls (instance_id, call_key, output, usage, cost_nanos, latency_ms) values ($1, 'k', 'o', '{}', 0, 1)`, [old]);
    await db().query(`insert into instance_events (instance_id, seq, type, data) values ($1, 1, 'instance.completed', '{}')`, [old]);
    // Keep the worker off the pending one.
    await db().query(`update instances set status = 'cancelled', finished_at = $2 where id = $1`, [fresh, now]);
    const account = '00000000-0000-4000-8000-00000000000a';
    const usageRow = (at: Date, model: string) =>
      db().query(
        `insert into usage_records (created_at, account_id, model, prompt_tokens, completion_tokens, total_tokens, cost_nanos, outcome) values ($1, $2, $3, 1, 1, 2, 0, 'ok')`,
        [at, account, model],
      );
    for (let i = 0; i < 3; i++) await usageRow(daysAgo(31 + i), `old-${i}`);
    await usageRow(daysAgo(29), 'young');
    await db().query(
      `insert into usage_hourly (account_id, hour, model, requests, prompt_tokens, completion_tokens, total_tokens, cost_nanos) values ($1, $2, 'old-0', 1, 1, 1, 2, 0)`,
      [account, daysAgo(31)],
    );
    // Stored responses (RESPONSES_RETENTION_DAYS 30) and audit entries (AUDIT_RETENTION_DAYS 365).
    const response = (id: string, at: Date) =>
      db().query(`insert into responses (id, account_id, input_items, body, created_at) values ($1, $2, '[]', '{}', $3)`, [id, user.id, at]);
    await response('00000000-0000-4000-8000-0000000000a1', daysAgo(31));
    await response('00000000-0000-4000-8000-0000000000a2', daysAgo(29));
    const audit = (action: string, at: Date) =>
      db().query(`insert into audit_log (actor_type, username, action, created_at) values ('admin', $1, $2, $3)`, [user.username, action, at]);
    await audit('old.entry', daysAgo(366));
    await audit('young.entry', daysAgo(364));
    const result = await h.app.runRetention(now);
    expect(result.responsesDeleted).toBe(1);
    expect(await db().query('select id from responses where account_id = $1', [user.id])).toEqual([{ id: '00000000-0000-4000-8000-0000000000a2' }]);
    // Entries other tests wrote are dated today, years before `now`: they go too.
    expect(result.auditRowsDeleted).toBeGreaterThanOrEqual(1);
    expect(await db().query(`select action from audit_log where action like '%.entry'`)).toEqual([{ action: 'young.entry' }]);
    // Other tests of this app recorded calls at today's date, years before `now`: those go too.
    expect(result.usageRowsDeleted).toBeGreaterThanOrEqual(3);
    expect(await db().query('select model from usage_records where account_id = $1', [account])).toEqual([{ model: 'young' }]);
    // The hourly totals stay: reports of old months still answer.
    expect(await db().query('select model from usage_hourly where account_id = $1', [account])).toEqual([{ model: 'old-0' }]);
    expect(result.deleted).toBeGreaterThanOrEqual(1);
    expect((await db().query('select id from instances where id = $1', [old]))).toEqual([]);
    expect(await db().query('select 1 from instance_calls where instance_id = $1', [old])).toEqual([]);
    expect(await db().query('select 1 from instance_events where instance_id = $1', [old])).toEqual([]);
    expect(await instance(db(), young)).toMatchObject({ idempotency_key: null });
    expect(await instance(db(), fresh)).toMatchObject({ idempotency_key: 'k-fresh' });
    expect(await instance(db(), stuck)).toMatchObject({ status: 'cancelled' });
    expect(await h.app.runRetention(now)).toEqual({ deleted: 0, keysCleared: 0, usageRowsDeleted: 0, responsesDeleted: 0, auditRowsDeleted: 0 });
  });
});
