// POST /v1/pipelines/instances/{id}/cancel (issue 7 point 5; docs/pipelines.md).
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { minimalLadder } from '../ladders/examples.js';
import { ask, instanceRow, runLadder, saveLadder, startHarness, userWithOpenAI, type Harness, type User } from '../e2e/ladder-harness.js';
import { cancel, getInstance, notFoundBody, setRow, start, startBody } from './pipelines-helpers.js';

const CANCELLED = { message: 'The run was cancelled before it finished.', type: 'execution_error', code: 'run_cancelled', status: 499 };

describe('cancelling instances', () => {
  let h: Harness;
  let user: User;
  let other: User;
  let cancelNotice: ReturnType<typeof vi.spyOn>;

  beforeAll(async () => {
    // An API-only process (no workers), so queued instances stay as the test leaves them.
    h = await startHarness({ WORKER_CONCURRENCY: '0' });
    cancelNotice = vi.spyOn(h.app.runNotices, 'cancelRequested');
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    h.fake.reset();
    cancelNotice.mockClear();
    user = await userWithOpenAI(h);
    other = await userWithOpenAI(h);
    await saveLadder(h, user, 'l', minimalLadder);
  });

  const startPending = async () => (await start(h, user, startBody(user, 'l', ask('x')))).json<{ instanceId: string }>().instanceId;

  it('cancels a pending instance at once, and answers it again on a second cancel', async () => {
    const id = await startPending();
    const res = await cancel(h, user, id);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ instanceId: id, status: 'cancelled', mode: 'async', started_at: null, result: null, error: CANCELLED });
    expect(body.finished_at).toBe(body.cancel_requested_at);
    expect(body.finished_at).not.toBeNull();
    expect(await instanceRow(h, id)).toMatchObject({ status: 'cancelled', error: CANCELLED, finished_at: new Date(body.finished_at) });
    expect(cancelNotice).not.toHaveBeenCalled();

    const again = await cancel(h, user, id);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(res.body);
    expect((await getInstance(h, user, id)).body).toBe(res.body);
  });

  it('marks a running instance and tells its worker, answering it as it is now', async () => {
    const id = await startPending();
    await setRow(h, id, "status = 'running', started_at = now(), attempts = 1");
    const res = await cancel(h, user, id);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ instanceId: id, status: 'running', finished_at: null, error: null });
    expect(body.cancel_requested_at).toEqual(expect.any(String));
    expect(cancelNotice).toHaveBeenCalledTimes(1);
    expect(cancelNotice).toHaveBeenCalledWith(id);
    const [row] = await h.testApp.database.query<{ cancel_requested_at: Date | null; status: string }>(
      'select cancel_requested_at, status from instances where id = $1', [id]);
    expect(row).toEqual({ status: 'running', cancel_requested_at: new Date(body.cancel_requested_at) });

    // A second request keeps the first request's time, and reminds the worker.
    const again = await cancel(h, user, id);
    expect(again.json().cancel_requested_at).toBe(body.cancel_requested_at);
    expect(cancelNotice).toHaveBeenCalledTimes(2);
  });

  it('refuses a completed or failed instance with 409 instance_already_finished', async () => {
    const done = (await runLadder(h, user, 'l', ask('x'))).headers['x-ladder-instance'] as string;
    h.fake.script({ kind: 'error', status: 503 });
    const failed = (await runLadder(h, user, 'l', ask('x'))).headers['x-ladder-instance'] as string;
    for (const [id, status] of [[done, 'completed'], [failed, 'failed']] as const) {
      const res = await cancel(h, user, id);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({
        error: {
          message: `Instance "${id}" has already finished (${status}); only a pending or running instance can be cancelled.`,
          type: 'invalid_request_error',
          code: 'instance_already_finished',
          param: null,
        },
      });
      expect((await instanceRow(h, id)).status).toBe(status);
    }
  });

  it('answers the one 404 for another account, an unknown or a malformed id, changing nothing', async () => {
    const id = await startPending();
    for (const [caller, target] of [[other, id], [user, 'f47ac10b-58cc-4372-a567-0e02b2c3d479'], [user, 'nope']] as const) {
      const res = await cancel(h, caller, target);
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe(notFoundBody(target));
    }
    expect((await instanceRow(h, id)).status).toBe('pending');
  });

  it('is race-safe: concurrent cancels of a pending instance finish it once', async () => {
    const id = await startPending();
    const answers = await Promise.all(Array.from({ length: 5 }, () => cancel(h, user, id)));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(5).fill(200));
    expect(new Set(answers.map((r) => r.json().finished_at)).size).toBe(1);
    expect(answers.every((r) => r.json().status === 'cancelled')).toBe(true);
  });
});
