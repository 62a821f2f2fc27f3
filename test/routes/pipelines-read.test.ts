// GET /v1/pipelines/instances/{id}, /trace and the list (issue 7 points 2 to 4;
// docs/pipelines.md). Synchronous runs make the completed and failed instances; rows are
// moved to `running` by hand, since the worker lives elsewhere.
import { nanosToUsd } from '../../src/money.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { minimalLadder } from '../ladders/examples.js';
import {
  ask, instanceRow, MODEL, runLadder, saveLadder, startHarness, userWithOpenAI, type Harness, type User,
} from '../e2e/ladder-harness.js';
import { getInstance, getTrace, list, notFoundBody, setRow, start, startBody } from './pipelines-helpers.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NO_USAGE = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

describe('reading instances', () => {
  let h: Harness;
  let user: User;
  let other: User;

  beforeAll(async () => {
    // An API-only process (no workers), so queued instances stay as the test leaves them.
    h = await startHarness({ WORKER_CONCURRENCY: '0' });
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    h.fake.reset();
    user = await userWithOpenAI(h);
    other = await userWithOpenAI(h);
    await saveLadder(h, user, 'l', minimalLadder);
  });

  async function startPending(text = 'x', slug = 'l', as = user) {
    const res = await start(h, as, startBody(as, slug, ask(text)));
    expect(res.statusCode, res.body).toBe(202);
    return res.json<{ instanceId: string }>().instanceId;
  }

  it('shows a pending instance in full', async () => {
    const id = await startPending();
    const res = await getInstance(h, user, id);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      instanceId: id,
      object: 'pipeline.instance',
      status: 'pending',
      mode: 'async',
      author: user.username,
      template: 'l',
      version: 1,
      model: MODEL,
      knobs: {},
      created_at: expect.stringMatching(ISO),
      started_at: null,
      finished_at: null,
      cancel_requested_at: null,
      attempts: 0,
      progress: { model_calls: 0, steps_completed: 0, steps_total: 2 },
      usage: NO_USAGE,
      spend_usd: 0,
      rerun_of: null,
      reused_calls: 0,
      reused_spend_usd: 0,
      result: null,
      error: null,
    });
  });

  it('shows a completed run with result equal to the synchronous answer', async () => {
    const sync = await runLadder(h, user, 'l', ask('hello'));
    expect(sync.statusCode).toBe(200);
    const id = sync.headers['x-ladder-instance'] as string;
    const row = await instanceRow(h, id);
    const res = await getInstance(h, user, id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      instanceId: id,
      object: 'pipeline.instance',
      status: 'completed',
      mode: 'sync',
      author: user.username,
      template: 'l',
      version: 1,
      model: MODEL,
      knobs: {},
      created_at: row.created_at.toISOString(),
      started_at: row.started_at!.toISOString(),
      finished_at: row.finished_at!.toISOString(),
      cancel_requested_at: null,
      attempts: 1,
      progress: { model_calls: 2, steps_completed: 2, steps_total: 2 },
      usage: sync.json().usage,
      spend_usd: nanosToUsd(Number(row.spend_nanos)),
      rerun_of: null,
      reused_calls: 0,
      reused_spend_usd: 0,
      result: sync.json(),
      error: null,
    });
    expect(res.json().result.created).toBe(Math.floor(row.finished_at!.getTime() / 1000));
  });

  it('shows a failed run with the error the synchronous route answered, and its status', async () => {
    h.fake.script({ kind: 'delay', ms: 0 }, { kind: 'error', status: 503 });
    const sync = await runLadder(h, user, 'l', ask('x'));
    expect(sync.statusCode).toBe(502);
    const id = sync.headers['x-ladder-instance'] as string;
    const body = (await getInstance(h, user, id)).json();
    const { param: _param, ...error } = sync.json().error;
    expect(body).toMatchObject({ status: 'failed', mode: 'sync', result: null, error: { ...error, status: 502 } });
    expect(body.progress).toEqual({ model_calls: 2, steps_completed: 1, steps_total: 2 });
    expect(body.finished_at).toMatch(ISO);
  });

  it('shows a running instance with the calls it has checkpointed so far', async () => {
    const id = await startPending();
    await setRow(h, id, "status = 'running', started_at = now(), attempts = 1, steps_completed = 1");
    await h.testApp.database.query(
      `insert into instance_calls (instance_id, call_key, output, usage, cost_nanos, provider, latency_ms) values
       ($1, 'a', 'one', '{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}', 250000000, 'openai', 12),
       ($1, 'b', 'two', '{"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}', 500000000, 'openai', 7)`,
      [id],
    );
    const body = (await getInstance(h, user, id)).json();
    expect(body).toMatchObject({
      status: 'running',
      attempts: 1,
      started_at: expect.stringMatching(ISO),
      finished_at: null,
      progress: { model_calls: 2, steps_completed: 1, steps_total: 2 },
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      spend_usd: 0.75,
      result: null,
      error: null,
    });
  });

  it('answers one identical 404 for another account, an unknown and a malformed id, on every instance path', async () => {
    const id = await startPending();
    for (const path of ['', '/trace']) {
      const foreign = await h.app.inject({ method: 'GET', url: `/v1/pipelines/instances/${id}${path}`, headers: other.headers });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(notFoundBody(id));
      const unknown = '0b6e9755-8dbc-4481-b968-74b63b17adb7';
      for (const missing of [unknown, 'not-a-uuid', '42', `${id}0`]) {
        const res = await h.app.inject({ method: 'GET', url: `/v1/pipelines/instances/${missing}${path}`, headers: user.headers });
        expect(res.statusCode, missing).toBe(404);
        expect(res.body, missing).toBe(notFoundBody(missing));
      }
    }
    const foreignCancel = await h.app.inject({ method: 'POST', url: `/v1/pipelines/instances/${id}/cancel`, headers: other.headers });
    expect(foreignCancel.body).toBe(notFoundBody(id));
    expect((await instanceRow(h, id)).status).toBe('pending');
  });

  describe('trace', () => {
    it('of a synchronous run is its recorded trace, step by step and node by node', async () => {
      const sync = await runLadder(h, user, 'l', ask('hello'));
      const id = sync.headers['x-ladder-instance'] as string;
      const row = await instanceRow(h, id);
      const res = await getTrace(h, user, id);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ object: 'pipeline.trace', instanceId: id, status: 'completed', partial: false });
      expect(body.steps).toEqual(
        row.trace!.map((step) => ({
          pass: 1,
          depth: 0,
          step: step.stepId,
          group: null,
          recursion_answer: null,
          nodes: step.nodes.map((n) => ({
            node: 1,
            prompt: n.prompt,
            prompt_chars: n.promptChars,
            output: n.output,
            usage: n.usage,
            cost_usd: nanosToUsd(n.costNanos),
            provider: 'openai',
            latency_ms: n.latencyMs,
            survived: true,
            error: null,
            reused: false,
            saved_usd: 0,
          })),
        })),
      );
      expect(body.steps.map((s: { step: string }) => s.step)).toEqual(['draft', 'refine']);
      expect(body.steps[1].nodes[0].output).toBe(sync.json().choices[0].message.content);
    });

    it('of a pending run is empty, and of a running one is built from its events', async () => {
      const id = await startPending();
      expect((await getTrace(h, user, id)).json()).toEqual({ object: 'pipeline.trace', instanceId: id, status: 'pending', partial: true, steps: [] });
      await setRow(h, id, "status = 'running', started_at = now()");
      const node = { step: 'draft', pass: 1, depth: 0, node: 1, provider: 'openai', latency_ms: 9, usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }, cost_usd: 0.01, survived: true, output_excerpt: 'out', prompt_excerpt: 'in', prompt_chars: 200 };
      const events: Array<[string, object]> = [
        ['run.started', {}],
        ['step.started', { step: 'draft', pass: 1, depth: 0 }],
        ['node.completed', node],
        ['step.started', { step: 'refine', pass: 1, depth: 0 }],
        ['node.failed', { ...node, step: 'refine', provider: null, output_excerpt: '', error: 'openai: HTTP 503' }],
      ];
      for (const [i, [type, data]] of events.entries()) {
        await h.testApp.database.query('insert into instance_events (instance_id, seq, type, data) values ($1, $2, $3, $4)', [id, i + 1, type, data]);
      }
      const body = (await getTrace(h, user, id)).json();
      expect(body).toMatchObject({ status: 'running', partial: true });
      expect(body.steps).toEqual([
        {
          pass: 1, depth: 0, step: 'draft', group: null, recursion_answer: null,
          nodes: [{ node: 1, prompt: 'in', prompt_chars: 200, output: 'out', usage: node.usage, cost_usd: 0.01, provider: 'openai', latency_ms: 9, survived: true, error: null, reused: false, saved_usd: 0 }],
        },
        {
          pass: 1, depth: 0, step: 'refine', group: null, recursion_answer: null,
          nodes: [{ node: 1, prompt: 'in', prompt_chars: 200, output: '', usage: node.usage, cost_usd: 0.01, provider: null, latency_ms: 9, survived: false, error: 'openai: HTTP 503', reused: false, saved_usd: 0 }],
        },
      ]);
    });
  });

  describe('list', () => {
    type Page = { object: string; data: Array<Record<string, unknown>>; has_more: boolean; next_cursor: string | null };

    it("pages through the account's instances newest first, with filters", async () => {
      await saveLadder(h, user, 'm', minimalLadder);
      const ids = [await startPending('1'), await startPending('2', 'm'), await startPending('3'), await startPending('4', 'm'), await startPending('5')];
      const sync = await runLadder(h, user, 'l', ask('6'));
      ids.push(sync.headers['x-ladder-instance'] as string);
      await saveLadder(h, other, 'l', minimalLadder);
      await startPending('theirs', 'l', other);
      // Equal creation times are ordered by id, and pages never skip or repeat across them.
      await h.testApp.database.query("update instances set created_at = '2030-01-01T00:00:00.000001Z' where id = any($1)", [ids.slice(1, 4)]);
      const expected = (await h.testApp.database.query<{ id: string }>(
        'select id from instances where account_id = $1 order by created_at desc, id desc', [user.id])).map((r) => r.id);
      expect(expected).toHaveLength(6);

      const seen: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 3; page++) {
        const res = await list(h, user, `?limit=2${cursor ? `&after=${cursor}` : ''}`);
        expect(res.statusCode, res.body).toBe(200);
        const body: Page = res.json();
        expect(body.object).toBe('list');
        expect(body.data).toHaveLength(2);
        expect(body.has_more).toBe(page < 2);
        for (const item of body.data) {
          expect(item).not.toHaveProperty('result');
          expect(item.object).toBe('pipeline.instance');
        }
        seen.push(...body.data.map((i) => i.instanceId as string));
        cursor = body.next_cursor;
      }
      expect(cursor).toBeNull();
      expect(seen).toEqual(expected);

      const all: Page = (await list(h, user)).json();
      expect(all.data.map((i) => i.instanceId)).toEqual(expected);
      expect(all).toMatchObject({ has_more: false, next_cursor: null });
      const item = all.data.find((i) => i.instanceId === ids[5])!;
      const { result: _result, ...withoutResult } = (await getInstance(h, user, ids[5]!)).json();
      expect(item).toEqual(withoutResult);

      const completed: Page = (await list(h, user, '?status=completed')).json();
      expect(completed.data.map((i) => i.instanceId)).toEqual([ids[5]]);
      const ofM: Page = (await list(h, user, `?template=m&author=${user.username}&status=pending`)).json();
      expect(ofM.data.map((i) => i.instanceId).sort()).toEqual([ids[1], ids[3]].sort());
      expect((await list(h, user, '?author=someone-else')).json().data).toEqual([]);
    });

    it('refuses bad limits, statuses, cursors and parameters with 400', async () => {
      for (const limit of ['0', '101', 'ten', '-1', '1.5', '']) {
        const res = await list(h, user, `?limit=${limit}`);
        expect(res.statusCode, limit).toBe(400);
        expect(res.json().error).toEqual({ message: 'limit must be an integer from 1 to 100.', type: 'invalid_request_error', code: 'invalid_value', param: 'limit' });
      }
      expect((await list(h, user, '?limit=100')).statusCode).toBe(200);
      const status = await list(h, user, '?status=succeeded');
      expect(status.statusCode).toBe(400);
      expect(status.json().error).toEqual({
        message: 'status must be one of: "pending", "running", "completed", "failed", "cancelled".',
        type: 'invalid_request_error', code: 'invalid_value', param: 'status',
      });
      const forge = (time: string) => Buffer.from(`${time}_0b6e9755-8dbc-4481-b968-74b63b17adb7`).toString('base64url');
      const forged = forge('2030-02-30T00:00:00.000000');
      // Well-formed, but no real time: a second 60, a month 13, the year 0 (which the database has not).
      const impossible = ['2030-01-01T23:59:60.000000', '2030-13-01T00:00:00.000000', '0000-01-01T00:00:00.000000'].map(forge);
      for (const after of ['garbage', 'Zm9v', forged, `${forged}=`, ...impossible]) {
        const res = await list(h, user, `?after=${after}`);
        expect(res.statusCode, after).toBe(400);
        expect(res.json().error).toEqual({
          message: 'The `after` cursor is not one this API returned; pass a `next_cursor` unchanged.',
          type: 'invalid_request_error', code: 'invalid_cursor', param: 'after',
        });
      }
      const stray = await list(h, user, '?page=2');
      expect(stray.json().error).toMatchObject({ code: 'unknown_parameter', param: 'page' });
    });
  });
});
