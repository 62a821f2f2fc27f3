// POST /v1/pipelines/instances (issue 7 point 1; docs/pipelines.md): every check of the
// synchronous route before anything is queued, the pending row, and Idempotency-Key.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LadderConfig } from '../../src/ladders/language/config.js';
import { createKey } from '../helpers/build.js';
import { gatedTreeOfThought, minimalLadder } from '../ladders/examples.js';
import {
  ask, instanceCount, instanceRow, MODEL, runLadder, saveLadder, startHarness, userWithOpenAI, type Harness, type User,
} from '../e2e/ladder-harness.js';
import { setRow, start, startBody } from './pipelines-helpers.js';

const constrained: LadderConfig = { ...minimalLadder, allowedTargets: { strategy: 'constrained', providers: ['*'], models: [MODEL] } };

describe('POST /v1/pipelines/instances', () => {
  let h: Harness;
  let user: User;
  let other: User;
  let pending: ReturnType<typeof vi.spyOn>;

  beforeAll(async () => {
    // An API-only process (no workers), so queued instances stay pending.
    h = await startHarness({ LADDER_MAX_NODES_PER_STEP: '4', WORKER_CONCURRENCY: '0' });
    pending = vi.spyOn(h.app.runNotices, 'pendingCreated');
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    h.fake.reset();
    pending.mockClear();
    user = await userWithOpenAI(h);
    other = await userWithOpenAI(h);
    await saveLadder(h, user, 'l', minimalLadder);
    await saveLadder(h, user, 'tot', gatedTreeOfThought);
    await saveLadder(h, user, 'narrow', constrained);
    await saveLadder(h, other, 'secret', minimalLadder);
  });

  it('answers 202 {instanceId, status: "pending"} with a Location, records a pending async row and wakes the workers', async () => {
    const res = await start(h, user, startBody(user, 'tot', {
      model: MODEL,
      messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'a' }, { role: 'user', content: [{ type: 'text', text: 'last' }, { type: 'text', text: 'part' }] }],
      knobs: { thoughts: 2.4 },
    }));
    expect(res.statusCode, res.body).toBe(202);
    const { instanceId } = res.json();
    expect(res.json()).toEqual({ instanceId: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'pending' });
    expect(res.headers.location).toBe(`/v1/pipelines/instances/${instanceId}`);
    const ladder = await h.testApp.database.query<{ id: string }>('select id from ladders where slug = $1 and account_id = $2', ['tot', user.id]);
    const row = await instanceRow(h, instanceId);
    expect(row).toMatchObject({
      ladder_id: ladder[0]!.id, ladder_version: 1, author: user.username, slug: 'tot', account_id: user.id, api_key_id: user.keyId,
      mode: 'async', model: MODEL, input: 'last\npart', knobs: { thoughts: 2 }, status: 'pending',
      started_at: null, finished_at: null, answer: null, error: null,
    });
    // Three steps, one pass, no recursion: three step executions.
    const [extra] = await h.testApp.database.query<{ steps_total: number; idempotency_key: string | null; attempts: number }>(
      'select steps_total, idempotency_key, attempts from instances where id = $1', [instanceId]);
    expect(extra).toEqual({ steps_total: 3, idempotency_key: null, attempts: 0 });
    expect(pending).toHaveBeenCalledTimes(1);
    expect(h.fake.requests).toHaveLength(0);
  });

  it('refuses exactly as the synchronous route does, before recording anything', async () => {
    const restricted = await createKey(h.app, user.username, { mode: 'blacklist', ladders: [`${user.username}/l`] });
    const excluded: User = { ...user, headers: { authorization: `Bearer ${restricted.key}` } };
    const cases: Array<{ name: string; as?: User; author?: string; slug: string; body: Record<string, unknown>; status: number; code: string }> = [
      { name: 'no model', slug: 'l', body: { messages: [{ role: 'user', content: 'x' }] }, status: 400, code: 'missing_required_field' },
      { name: 'no messages', slug: 'l', body: { model: MODEL }, status: 400, code: 'missing_required_field' },
      { name: 'a bad role', slug: 'l', body: { model: MODEL, messages: [{ role: 'robot', content: 'x' }] }, status: 400, code: 'invalid_value' },
      { name: 'no user message', slug: 'l', body: { model: MODEL, messages: [{ role: 'system', content: 'x' }] }, status: 400, code: 'missing_user_message' },
      { name: 'missing ladder', slug: 'nope', body: ask('x'), status: 404, code: 'ladder_not_found' },
      { name: 'private ladder', author: other.username, slug: 'secret', body: ask('x'), status: 404, code: 'ladder_not_found' },
      { name: 'excluded by the key', as: excluded, slug: 'l', body: ask('x'), status: 404, code: 'ladder_not_found' },
      { name: 'malformed author', author: 'Not_A_User', slug: 'l', body: ask('x'), status: 404, code: 'ladder_not_found' },
      { name: 'model not allowed', slug: 'narrow', body: ask('x', { model: 'gpt-4o' }), status: 400, code: 'model_not_allowed' },
      { name: 'unknown knob', slug: 'l', body: ask('x', { knobs: { nope: 1 } }), status: 400, code: 'invalid_knob' },
      { name: 'knob not a number', slug: 'tot', body: ask('x', { knobs: { thoughts: 'many' } }), status: 400, code: 'invalid_knob' },
      { name: 'knobs not an object', slug: 'tot', body: ask('x', { knobs: [1] }), status: 400, code: 'invalid_knobs' },
      { name: 'platform cap', slug: 'tot', body: ask('x', { knobs: { thoughts: 5 } }), status: 422, code: 'run_limit_exceeded' },
    ];
    const before = await instanceCount(h);
    for (const c of cases) {
      const caller = c.as ?? user;
      const author = c.author ?? user.username;
      const sync = await runLadder(h, caller, c.slug, c.body, author);
      const background = await start(h, caller, { author, template: c.slug, ...c.body });
      expect(sync.statusCode, `${c.name}: ${sync.body}`).toBe(c.status);
      expect(sync.json().error.code, c.name).toBe(c.code);
      expect(sync.headers['x-ladder-instance'], c.name).toBeUndefined();
      expect(background.statusCode, c.name).toBe(c.status);
      expect(background.body, c.name).toBe(sync.body);
      // A streamed run is refused the same way, as plain JSON, before any stream opens.
      const streamed = await runLadder(h, caller, c.slug, { ...c.body, stream: true }, author);
      expect(streamed.statusCode, c.name).toBe(c.status);
      expect(streamed.body, c.name).toBe(sync.body);
    }
    // Only the background route refuses stream: true (its events stream instead).
    const background = await start(h, user, { author: user.username, template: 'l', ...ask('x', { stream: true }) });
    expect(background.statusCode).toBe(400);
    expect(background.json()).toEqual({
      error: { message: 'Streaming is not supported yet: omit `stream` or set it to false.', type: 'invalid_request_error', code: 'stream_not_supported', param: 'stream' },
    });
    expect(await instanceCount(h)).toBe(before);
    expect(h.fake.requests).toHaveLength(0);
    expect(pending).not.toHaveBeenCalled();
  });

  it('refuses unknown members and a malformed Idempotency-Key with 400, recording nothing', async () => {
    const before = await instanceCount(h);
    const stray = await start(h, user, startBody(user, 'l', ask('x', { ladder: 'l' })));
    expect(stray.statusCode).toBe(400);
    expect(stray.json()).toEqual({
      error: { message: 'Unrecognized request argument supplied: ladder.', type: 'invalid_request_error', code: 'unknown_parameter', param: 'ladder' },
    });
    const missing = await start(h, user, { author: user.username, ...ask('x') });
    expect(missing.json().error).toMatchObject({ code: 'missing_required_field', param: 'template' });
    for (const key of ['', 'k'.repeat(256), 'tab\there']) {
      const res = await start(h, user, startBody(user, 'l', ask('x')), { 'idempotency-key': key });
      expect(res.statusCode, JSON.stringify(key)).toBe(400);
      expect(res.json()).toEqual({
        error: {
          message: 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
          type: 'invalid_request_error',
          code: 'invalid_idempotency_key',
          param: 'Idempotency-Key',
        },
      });
    }
    expect(await instanceCount(h)).toBe(before);
    const longest = await start(h, user, startBody(user, 'l', ask('x')), { 'idempotency-key': `${'k'.repeat(254)}~` });
    expect(longest.statusCode).toBe(202);
  });

  describe('Idempotency-Key', () => {
    const key = { 'idempotency-key': 'order-42 retry-safe' };

    it('answers the same instance for the same key and body, whatever its status now, and queues one run', async () => {
      const first = await start(h, user, startBody(user, 'tot', ask('x', { knobs: { thoughts: 2 } })), key);
      expect(first.statusCode).toBe(202);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const before = await instanceCount(h);
      // Member order does not matter: the body is hashed in a canonical form.
      const again = await start(h, user, { knobs: { thoughts: 2 }, messages: [{ content: 'x', role: 'user' }], model: MODEL, template: 'tot', author: user.username }, key);
      expect(again.statusCode).toBe(202);
      expect(again.body).toBe(first.body);
      expect(again.headers.location).toBe(first.headers.location);
      expect(again.headers['idempotent-replayed']).toBe('true');
      await setRow(h, first.json().instanceId, "status = 'running', started_at = now()");
      const later = await start(h, user, startBody(user, 'tot', ask('x', { knobs: { thoughts: 2 } })), key);
      expect(later.statusCode).toBe(202);
      expect(later.json()).toEqual({ instanceId: first.json().instanceId, status: 'pending' });
      expect(await instanceCount(h)).toBe(before);
      expect(pending).toHaveBeenCalledTimes(1);
      const [row] = await h.testApp.database.query<{ idempotency_key: string; request_hash: string }>(
        'select idempotency_key, request_hash from instances where id = $1', [first.json().instanceId]);
      expect(row).toEqual({ idempotency_key: 'order-42 retry-safe', request_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    });

    it('is 409 idempotency_key_reused for the same key with another body', async () => {
      const first = await start(h, user, startBody(user, 'l', ask('x')), key);
      const before = await instanceCount(h);
      const res = await start(h, user, startBody(user, 'l', ask('y')), key);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({
        error: {
          message: 'This Idempotency-Key was already used in the last 24 hours with a different request body; use a new key for a different request.',
          type: 'invalid_request_error',
          code: 'idempotency_key_reused',
          param: 'Idempotency-Key',
        },
      });
      expect(res.headers.location).toBeUndefined();
      expect(await instanceCount(h)).toBe(before);
      expect((await start(h, user, startBody(user, 'l', ask('x')), key)).json().instanceId).toBe(first.json().instanceId);
    });

    it('makes one instance of concurrent starts with the same key', async () => {
      const before = await instanceCount(h);
      const answers = await Promise.all(Array.from({ length: 6 }, () => start(h, user, startBody(user, 'l', ask('x')), { 'idempotency-key': 'race' })));
      expect(answers.map((r) => r.statusCode)).toEqual(Array(6).fill(202));
      expect(new Set(answers.map((r) => r.json().instanceId)).size).toBe(1);
      expect(await instanceCount(h)).toBe(before + 1);
      expect(pending).toHaveBeenCalledTimes(1);
      // Concurrent starts with different bodies: one wins, the others are told the key is taken.
      const mixed = await Promise.all(['a', 'b', 'c'].map((text) => start(h, user, startBody(user, 'l', ask(text)), { 'idempotency-key': 'race-2' })));
      expect(mixed.map((r) => r.statusCode).sort()).toEqual([202, 409, 409]);
      expect(await instanceCount(h)).toBe(before + 2);
    });

    it('keeps keys apart per account, and frees a key after 24 hours', async () => {
      const mine = await start(h, user, startBody(user, 'l', ask('x')), key);
      const theirs = await start(h, other, startBody(user, 'l', ask('x')), key);
      // The other account cannot see the private ladder: its own key is still unused afterwards.
      expect(theirs.statusCode).toBe(404);
      const ownLadder = await start(h, other, startBody(other, 'secret', ask('x')), key);
      expect(ownLadder.statusCode).toBe(202);
      expect(ownLadder.json().instanceId).not.toBe(mine.json().instanceId);

      await setRow(h, mine.json().instanceId, "created_at = now() - interval '25 hours'");
      const fresh = await start(h, user, startBody(user, 'l', ask('something else')), key);
      expect(fresh.statusCode).toBe(202);
      expect(fresh.json().instanceId).not.toBe(mine.json().instanceId);
      const keys = await h.testApp.database.query<{ id: string; idempotency_key: string | null }>(
        'select id, idempotency_key from instances where id = any($1) order by created_at', [[mine.json().instanceId, fresh.json().instanceId]]);
      expect(keys).toEqual([
        { id: mine.json().instanceId, idempotency_key: null },
        { id: fresh.json().instanceId, idempotency_key: 'order-42 retry-safe' },
      ]);
    });
  });

  it('answers a wrong method on an instance path with 405 and its Allow header', async () => {
    const res = await h.app.inject({ method: 'DELETE', url: '/v1/pipelines/instances/1f0c2a4e-0000-4000-8000-000000000000', headers: user.headers });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET');
  });
});
