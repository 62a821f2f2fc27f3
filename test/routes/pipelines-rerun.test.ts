// POST /v1/pipelines/instances/{id}/rerun (issue 20 point 2; docs/pipelines.md, "Rerun"):
// every call whose model and whole prompt the source run recorded is reused (no vendor call, no
// spend, no ledger row), one source call per reuse; changed steps pay; owner only; Idempotency-Key;
// `wait: true`; and a rerun resumed after a crash neither re-reuses nor re-pays.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LadderConfig, ModelStep } from '../../src/ladders/language/config.js';
import { nanosToUsd } from '../../src/money.js';
import { createPriceTable, costOf } from '../../src/pricing/prices.js';
import { createKey } from '../helpers/build.js';
import { setKeyLimits } from '../quotas/helpers.js';
import { events, insertPending, waitForStatus } from '../helpers/instances.js';
import { minimalLadder } from '../ladders/examples.js';
import { ask, echo, MODEL, saveLadder, startHarness, userWithOpenAI, type Harness, type User } from '../e2e/ladder-harness.js';
import { getInstance, getTrace, notFoundBody, start, startBody, type Headers } from './pipelines-helpers.js';

const draftPrompt = (q: string) => `Question: ${q}\n\n[System Instruction]\nAnswer the question.`;
const [draftStep, refineStep] = minimalLadder.steps as [ModelStep, ModelStep];
const refinePrompt = (q: string, draft: string, instruction = refineStep.systemPrompt!) =>
  `Question: ${q}\n\nDraft: ${draft}\n\n[System Instruction]\n${instruction}`;
const NEW_INSTRUCTION = 'Rewrite the draft as one short sentence.';

/** The last step's system prompt changed, nothing else. */
const changedLastStep: LadderConfig = {
  ...minimalLadder,
  steps: [draftStep, { ...refineStep, systemPrompt: NEW_INSTRUCTION }],
};

/** `n` guesses whose prompts are identical (no node number in them), then a pick over all of them. */
const twins: LadderConfig = {
  name: 'Twins',
  exit: 'pick',
  knobs: { n: { name: 'Guesses', type: 'nodes', input: 'slider', steps: [{ title: 'Two', value: 2, default: true }, { title: 'Three', value: 3 }] } },
  steps: [
    { id: 'guess', name: 'Guess', type: 'normal', nodes: '{{knobs.n}}', fields: [{ name: 'Question', type: 'text', from: 'input.context' }], systemPrompt: 'Guess.' },
    { id: 'pick', name: 'Pick', type: 'normal', fields: [{ name: 'Guess', type: 'multi_ingest', from: { stepId: 'guess', nodeRef: 'accumulate' } }], systemPrompt: 'Pick one.' },
  ],
};

/** What the call of `prompt` cost, in dollars as the API shows it. */
const cost = (prompt: string) =>
  nanosToUsd(costOf(MODEL, { prompt_tokens: prompt.length, completion_tokens: echo(prompt).length, total_tokens: prompt.length + echo(prompt).length }, createPriceTable()));

describe('POST /v1/pipelines/instances/{id}/rerun', () => {
  let h: Harness;
  let user: User;
  const db = () => h.testApp.database;
  const rerun = (id: string, payload: Record<string, unknown> | undefined = {}, as: User = user, headers: Headers = {}) =>
    h.app.inject({ method: 'POST', url: `/v1/pipelines/instances/${id}/rerun`, headers: { ...as.headers, ...headers }, ...(payload ? { payload } : {}) });

  /** A background run of `slug` on `text`, finished; the fake's requests are forgotten after it. */
  async function finishedRun(slug: string, text: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await start(h, user, startBody(user, slug, ask(text, extra)));
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json<{ instanceId: string }>().instanceId;
    expect((await waitForStatus(db(), id, ['completed', 'failed'])).status).toBe('completed');
    h.fake.reset();
    return id;
  }

  async function rerunFinished(id: string, payload: Record<string, unknown> = {}) {
    const res = await rerun(id, payload);
    expect(res.statusCode, res.body).toBe(202);
    const newId = res.json<{ instanceId: string }>().instanceId;
    expect(res.headers.location).toBe(`/v1/pipelines/instances/${newId}`);
    await waitForStatus(db(), newId, ['completed', 'failed', 'cancelled']);
    return { id: newId, view: (await getInstance(h, user, newId)).json(), trace: (await getTrace(h, user, newId)).json() };
  }

  const ledgerRows = async (instanceId: string) => {
    await h.app.usageLedger.flush();
    const [row] = await db().query<{ n: number }>('select count(*)::int as n from usage_records where instance_id = $1', [instanceId]);
    return Number(row!.n);
  };

  beforeAll(async () => {
    // The crash test hands the worker a lease that has already run out; a short lease of its own
    // would let a busy machine's late heartbeat lose the run to the other slot (a third attempt).
    h = await startHarness({ WORKER_CONCURRENCY: '2', WORKER_POLL_MS: '200', RUN_LEASE_MS: '15000', LADDER_MAX_CONCURRENT_CALLS: '4' });
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    h.fake.reset();
    user = await userWithOpenAI(h);
    await saveLadder(h, user, 'l', minimalLadder);
    await saveLadder(h, user, 'twins', twins);
  });

  it('reuses every call of an unchanged run: no vendor call, no spend, no ledger row, the same answer', async () => {
    const q = 'What is 2+2?';
    const sourceId = await finishedRun('l', q);
    const source = (await getInstance(h, user, sourceId)).json();
    expect(source).toMatchObject({ rerun_of: null, reused_calls: 0, reused_spend_usd: 0 });
    const sourceLedger = await ledgerRows(sourceId);
    expect(sourceLedger).toBe(2);

    const { id, view, trace } = await rerunFinished(sourceId);
    expect(h.fake.requests).toHaveLength(0);
    const p1 = draftPrompt(q);
    const p2 = refinePrompt(q, echo(p1));
    expect(view).toMatchObject({
      status: 'completed', mode: 'async', version: 1, model: MODEL, rerun_of: sourceId,
      progress: { model_calls: 2, steps_completed: 2, steps_total: 2 },
      usage: source.usage, spend_usd: 0, reused_calls: 2,
      result: { choices: [{ message: { content: echo(p2) } }] },
    });
    expect(view.reused_spend_usd).toBeCloseTo(source.spend_usd, 12);
    expect(view.reused_spend_usd).toBeCloseTo(cost(p1) + cost(p2), 12);
    // Marked in the trace, the events and the checkpoints.
    const nodes = trace.steps.flatMap((s: { nodes: unknown[] }) => s.nodes);
    expect(nodes).toEqual([
      expect.objectContaining({ node: 1, output: echo(p1), cost_usd: 0, reused: true, saved_usd: cost(p1), provider: 'openai', latency_ms: 0 }),
      expect.objectContaining({ node: 1, output: echo(p2), cost_usd: 0, reused: true, saved_usd: cost(p2) }),
    ]);
    const log = await events(db(), id);
    expect(log[0]!.data).toEqual({ attempt: 1, resumed: false, recorded_calls: 0, rerun_of: sourceId, reusable_calls: 2 });
    expect(log.filter((e) => e.type === 'node.completed').map((e) => [e.data.reused, e.data.cost_usd, e.data.saved_usd])).toEqual([[true, 0, cost(p1)], [true, 0, cost(p2)]]);
    expect(log.at(-1)).toMatchObject({ type: 'instance.completed', data: { model_calls: 2, spend_usd: 0, reused_calls: 2 } });
    const calls = await db().query<{ call_key: string; cost_nanos: number; reused_from: string; saved_nanos: number; prompt_hash: string }>(
      'select call_key, cost_nanos, reused_from, saved_nanos, prompt_hash from instance_calls where instance_id = $1 order by call_key', [id]);
    expect(calls.map((c) => [c.call_key, Number(c.cost_nanos), c.reused_from])).toEqual([['1.draft.1', 0, '1.draft.1'], ['1.refine.1', 0, '1.refine.1']]);
    expect(calls.every((c) => /^[0-9a-f]{64}$/.test(c.prompt_hash))).toBe(true);
    expect(await ledgerRows(id)).toBe(0);

    // A rerun of the rerun reuses again, and saves what the first run paid.
    const again = await rerunFinished(id);
    expect(h.fake.requests).toHaveLength(0);
    expect(again.view).toMatchObject({ rerun_of: id, reused_calls: 2, spend_usd: 0 });
    expect(again.view.reused_spend_usd).toBeCloseTo(source.spend_usd, 12);
  });

  it('uses no quota for reused calls: a key allowed one request a minute reruns a two-call run, twice', async () => {
    const sourceId = await finishedRun('l', 'Count me once');
    await setKeyLimits(h.app, user.keyId, { requests_per_minute: 1 });
    for (let i = 0; i < 2; i++) {
      const { view } = await rerunFinished(sourceId);
      expect(view).toMatchObject({ status: 'completed', reused_calls: 2, spend_usd: 0, error: null });
    }
    // The minute's one request is still there (a new minute would only give it back).
    const direct = await h.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: user.headers, payload: ask('hi') });
    expect(direct.statusCode, direct.body).toBe(200);
  });

  it('reuses nothing when the model changed', async () => {
    const sourceId = await finishedRun('l', 'Name a colour');
    const { view, trace } = await rerunFinished(sourceId, { model: 'gpt-4o' });
    expect(h.fake.requests.map((r) => r.body.model)).toEqual(['gpt-4o', 'gpt-4o']);
    expect(view).toMatchObject({ status: 'completed', model: 'gpt-4o', rerun_of: sourceId, reused_calls: 0, reused_spend_usd: 0, progress: { model_calls: 2 } });
    expect(view.spend_usd).toBeGreaterThan(0);
    expect(trace.steps.flatMap((s: { nodes: Array<{ reused: boolean }> }) => s.nodes.map((n) => n.reused))).toEqual([false, false]);
  });

  it('pays only for the last step when a new version changed only its system prompt', async () => {
    const q = 'Why is the sky blue?';
    const sourceId = await finishedRun('l', q);
    expect((await saveLadder(h, user, 'l', changedLastStep)).version).toBe(2);
    const { id, view } = await rerunFinished(sourceId, { version: 2 });
    const p1 = draftPrompt(q);
    const p2 = refinePrompt(q, echo(p1), NEW_INSTRUCTION);
    expect(h.fake.requests.map((r) => r.body.messages[0].content)).toEqual([p2]);
    expect(view).toMatchObject({ status: 'completed', version: 2, rerun_of: sourceId, reused_calls: 1, result: { choices: [{ message: { content: echo(p2) } }] } });
    expect(view.spend_usd).toBeCloseTo(cost(p2), 12);
    expect(view.reused_spend_usd).toBeCloseTo(cost(p1), 12);
    expect(await ledgerRows(id)).toBe(1);
    // Without `version`, the source's version runs: everything is reused.
    h.fake.reset();
    expect((await rerunFinished(sourceId)).view).toMatchObject({ version: 1, reused_calls: 2, spend_usd: 0 });
    expect(h.fake.requests).toHaveLength(0);
  });

  it('reuses each recorded call once: identical prompts in parallel nodes get distinct recorded outputs', async () => {
    const q = 'Pick a number';
    h.fake.script({ kind: 'reply', content: 'seven' }, { kind: 'reply', content: 'eleven' });
    const sourceId = await finishedRun('twins', q);
    const guesses = async (id: string) => ((await getTrace(h, user, id)).json().steps[0].nodes as Array<{ output: string }>).map((n) => n.output);
    const sourceGuesses = await guesses(sourceId);
    expect([...sourceGuesses].sort()).toEqual(['eleven', 'seven']);

    const same = await rerunFinished(sourceId);
    expect(h.fake.requests).toHaveLength(0);
    expect(same.view).toMatchObject({ status: 'completed', reused_calls: 3, spend_usd: 0 });
    expect(await guesses(same.id)).toEqual(sourceGuesses);

    // Three guesses now: two recorded ones to reuse, so one guess (and the pick, whose prompt changed) is paid for.
    const more = await rerunFinished(sourceId, { knobs: { n: 3 } });
    expect(more.view).toMatchObject({ status: 'completed', knobs: { n: 3 }, reused_calls: 2 });
    expect(h.fake.requests).toHaveLength(2);
    const three = await guesses(more.id);
    expect(three.slice(0, 2)).toEqual(sourceGuesses);
    expect(three[2]).toBe(echo(`Question: ${q}\n\n[System Instruction]\nGuess.`));
  });

  it('is the owner’s only, and the key’s ladder access list applies: the usual 404 otherwise', async () => {
    const sourceId = await finishedRun('l', 'secret question');
    const other = await userWithOpenAI(h);
    const restricted = await createKey(h.app, user.username, { mode: 'blacklist', ladders: [`${user.username}/l`] });
    const excluded: User = { ...user, headers: { authorization: `Bearer ${restricted.key}` } };
    for (const as of [other, excluded]) {
      const res = await rerun(sourceId, {}, as);
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe(notFoundBody(sourceId));
    }
    for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      expect((await rerun(id)).body).toBe(notFoundBody(id));
    }
    const [{ n }] = await db().query<{ n: number }>('select count(*)::int as n from instances where rerun_of = $1', [sourceId]) as [{ n: number }];
    expect(n).toBe(0);
    expect(h.fake.requests).toHaveLength(0);
  });

  it('never reuses another account’s calls, even if a row names its instance', async () => {
    const sourceId = await finishedRun('l', 'shared question');
    const other = await userWithOpenAI(h);
    const ladder = await saveLadder(h, other, 'l', minimalLadder);
    const id = await insertPending(db(), { ladderId: ladder.id, ladderVersion: 1, author: other.username, slug: 'l', accountId: other.id, input: 'shared question' }, { rerun_of: sourceId });
    await h.app.runNotices.pendingCreated();
    const row = await waitForStatus(db(), id, ['completed', 'failed']);
    expect(row).toMatchObject({ status: 'completed', model_calls: 2 });
    expect(h.fake.requests).toHaveLength(2);
    expect((await getInstance(h, other, id)).json()).toMatchObject({ rerun_of: sourceId, reused_calls: 0 });
  });

  it('refuses a source still running, a version never saved, and a bad change, recording nothing', async () => {
    const sourceId = await finishedRun('l', 'x');
    const ladder = await db().query<{ id: string }>('select ladder_id as id from instances where id = $1', [sourceId]);
    const running = await insertPending(db(), { ladderId: ladder[0]!.id, ladderVersion: 1, author: user.username, slug: 'l', accountId: user.id, input: 'x' }, {
      status: 'running', attempts: 1, fence: 1, claimed_by: 'elsewhere', started_at: new Date(), lease_expires_at: new Date(Date.now() + 600_000),
    });
    const cases: Array<{ id: string; body: Record<string, unknown>; status: number; code: string; param?: string | null; message?: string }> = [
      { id: running, body: {}, status: 409, code: 'instance_not_finished', message: `Instance "${running}" is still running; only a completed, failed or cancelled instance can be rerun.` },
      { id: sourceId, body: { version: 7 }, status: 404, code: 'ladder_version_not_found', message: `Ladder "${user.username}/l" has no version 7; its current version is 1.` },
      { id: sourceId, body: { version: 0 }, status: 400, code: 'invalid_value' },
      { id: sourceId, body: { knobs: { nope: 1 } }, status: 400, code: 'invalid_knob', param: 'knobs.nope' },
      { id: sourceId, body: { knobs: [1] }, status: 400, code: 'invalid_knobs' },
      { id: sourceId, body: { messages: [{ role: 'system', content: 'x' }] }, status: 400, code: 'missing_user_message' },
      { id: sourceId, body: { temperature: 0.2 }, status: 400, code: 'unknown_parameter' },
    ];
    for (const c of cases) {
      const res = await rerun(c.id, c.body);
      expect(res.statusCode, `${JSON.stringify(c.body)}: ${res.body}`).toBe(c.status);
      expect(res.json().error.code).toBe(c.code);
      if (c.param !== undefined) expect(res.json().error.param).toBe(c.param);
      if (c.message) expect(res.json().error.message).toBe(c.message);
    }
    const reruns = await db().query('select id from instances where rerun_of is not null and account_id = $1', [user.id]);
    expect(reruns).toEqual([]);
  });

  it('takes a new input, and a bodiless POST reruns as it was', async () => {
    const sourceId = await finishedRun('l', 'first input');
    const changed = await rerunFinished(sourceId, { messages: [{ role: 'user', content: 'second input' }] });
    expect(changed.view).toMatchObject({ status: 'completed', reused_calls: 0 });
    expect(h.fake.requests[0]!.body.messages[0].content).toBe(draftPrompt('second input'));
    h.fake.reset();
    const res = await rerun(sourceId, undefined);
    expect(res.statusCode, res.body).toBe(202);
    const row = await waitForStatus(db(), res.json().instanceId, ['completed', 'failed']);
    expect(row).toMatchObject({ status: 'completed', input: 'first input', rerun_of: sourceId });
    expect(Number(row.spend_nanos)).toBe(0); // bigint: a string from node-postgres
  });

  it('answers a retry with the same Idempotency-Key with the same rerun, and refuses the key for another body', async () => {
    const sourceId = await finishedRun('l', 'idempotent');
    const key = { 'idempotency-key': `rerun-${sourceId}` };
    const first = await rerun(sourceId, { knobs: {} }, user, key);
    expect(first.statusCode, first.body).toBe(202);
    const second = await rerun(sourceId, { knobs: {} }, user, key);
    expect(second.statusCode).toBe(202);
    expect(second.json()).toEqual(first.json());
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers.location).toBe(first.headers.location);
    // `wait` changes only how the answer comes: the same key and changes, waited for, is the same rerun.
    const waited = await rerun(sourceId, { knobs: {}, wait: true }, user, key);
    expect(waited.statusCode, waited.body).toBe(200);
    expect(waited.json()).toMatchObject({ instanceId: first.json().instanceId, status: 'completed', reused_calls: 2 });
    const other = await rerun(sourceId, { model: 'gpt-4o' }, user, key);
    expect(other.statusCode).toBe(409);
    expect(other.json().error.code).toBe('idempotency_key_reused');
    const rows = await db().query('select id from instances where rerun_of = $1', [sourceId]);
    expect(rows).toHaveLength(1);
  });

  it('with wait: true answers 200 with the finished instance exactly as GET answers it', async () => {
    const sourceId = await finishedRun('l', 'wait for me');
    await saveLadder(h, user, 'l', changedLastStep);
    const res = await rerun(sourceId, { version: 2, wait: true });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(res.headers.location).toBe(`/v1/pipelines/instances/${body.instanceId}`);
    expect(body).toMatchObject({ status: 'completed', version: 2, rerun_of: sourceId, reused_calls: 1 });
    expect(body).toEqual((await getInstance(h, user, body.instanceId)).json());
    expect(h.fake.requests).toHaveLength(1);
  });

  it('resumed after a crash, replays its reused calls as reused and never takes a source call twice', async () => {
    const q = 'Crash me';
    h.fake.script({ kind: 'reply', content: 'seven' }, { kind: 'reply', content: 'eleven' });
    const sourceId = await finishedRun('twins', q);
    const source = await db().query<{ call_key: string; output: string }>('select call_key, output from instance_calls where instance_id = $1 order by call_key', [sourceId]);
    const [one, two] = [source[0]!, source[1]!];
    expect([one.call_key, two.call_key]).toEqual(['1.guess.1', '1.guess.2']);
    // An earlier attempt reused the source's node 2 for its node 1, checkpointed it, and died.
    const [ladder] = await db().query<{ ladder_id: string }>('select ladder_id from instances where id = $1', [sourceId]);
    const id = await insertPending(db(), { ladderId: ladder!.ladder_id, ladderVersion: 1, author: user.username, slug: 'twins', accountId: user.id, input: q, knobs: { n: 2 } }, {
      rerun_of: sourceId, status: 'running', attempts: 1, fence: 1, claimed_by: 'dead-process', started_at: new Date(Date.now() - 5000), lease_expires_at: new Date(Date.now() - 1000),
    });
    const [saved] = await db().query<{ saved_nanos: number }>('select cost_nanos as saved_nanos from instance_calls where instance_id = $1 and call_key = $2', [sourceId, two.call_key]);
    await db().query(
      `insert into instance_calls (instance_id, call_key, output, usage, cost_nanos, provider, latency_ms, prompt_hash, reused_from, saved_nanos)
       select $1, '1.guess.1', output, usage, 0, provider, 0, prompt_hash, call_key, cost_nanos from instance_calls where instance_id = $2 and call_key = $3`,
      [id, sourceId, two.call_key],
    );
    await db().query(`insert into instance_events (instance_id, seq, type, data) values ($1, 1, 'instance.started', '{}')`, [id]);
    const row = await waitForStatus(db(), id, ['completed', 'failed']);
    expect(row).toMatchObject({ status: 'completed', attempts: 2, model_calls: 3 });
    const guesses = (await getTrace(h, user, id)).json().steps[0].nodes.map((n: { output: string; reused: boolean }) => [n.output, n.reused]);
    expect(guesses).toEqual([[two.output, true], [one.output, true]]);
    // The pick reads the guesses in a new order: a new prompt, paid for.
    expect(h.fake.requests).toHaveLength(1);
    const view = (await getInstance(h, user, id)).json();
    expect(view.reused_calls).toBe(2);
    expect(view.reused_spend_usd).toBeGreaterThanOrEqual(nanosToUsd(Number(saved!.saved_nanos)));
    const log = await events(db(), id);
    expect(log.find((e) => e.type === 'instance.started' && e.data.resumed)?.data).toEqual({ attempt: 2, resumed: true, recorded_calls: 1, rerun_of: sourceId, reusable_calls: 2 });
  });
});

describe('rerun with wait: true and no worker to run it', () => {
  let h: Harness;
  beforeAll(async () => {
    // An API-only process: the rerun stays pending, so the wait runs out (run time limit + one lease).
    h = await startHarness({ WORKER_CONCURRENCY: '0', LADDER_MAX_RUN_MS: '1000', RUN_LEASE_MS: '1000' });
  });
  afterAll(() => h.close());

  it('reruns a synchronous run, and answers 202 as without wait once the wait has run out', async () => {
    const user = await userWithOpenAI(h);
    await saveLadder(h, user, 'l', minimalLadder);
    const sync = await h.app.inject({ method: 'POST', url: `/v1/${user.username}/l/chat/completions`, headers: user.headers, payload: ask('sync source') });
    expect(sync.statusCode, sync.body).toBe(200);
    const sourceId = sync.headers['x-ladder-instance'] as string;
    const res = await h.app.inject({ method: 'POST', url: `/v1/pipelines/instances/${sourceId}/rerun`, headers: user.headers, payload: { wait: true } });
    expect(res.statusCode, res.body).toBe(202);
    const { instanceId } = res.json();
    expect(res.json()).toEqual({ instanceId, status: 'pending' });
    expect(res.headers.location).toBe(`/v1/pipelines/instances/${instanceId}`);
    expect((await getInstance(h, user, instanceId)).json()).toMatchObject({ status: 'pending', mode: 'async', rerun_of: sourceId });
  });
});
