// Issue 23, part 4: disabling an account cancels its runs in flight: queued ones at once,
// running ones (background or synchronous, held by any process) through the cancel notice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimalLadder } from '../ladders/examples.js';
import { ask, instanceRow, runLadder, saveLadder, startHarness, userWithOpenAI, type Harness } from '../e2e/ladder-harness.js';
import { adminHeaders } from '../helpers/build.js';
import { waitFor } from '../helpers/instances.js';
import { start, startBody } from './pipelines-helpers.js';

const CANCELLED = { message: 'The run was cancelled before it finished.', type: 'execution_error', code: 'run_cancelled', status: 499 };

describe('disabling an account cancels its runs in flight', () => {
  let h: Harness;
  let release: () => void = () => {};
  beforeAll(async () => {
    h = await startHarness({ WORKER_POLL_MS: '60000' });
  });
  afterAll(async () => {
    release();
    await h.close();
  });

  it('a running background run, a running synchronous one and a queued one all end cancelled; another account’s run goes on', async () => {
    const user = await userWithOpenAI(h);
    const bystander = await userWithOpenAI(h);
    await saveLadder(h, user, 'slow', minimalLadder);
    await saveLadder(h, bystander, 'slow', minimalLadder);
    // Every model call waits until the test lets it go.
    const held = new Promise<void>((resolve) => (release = resolve));
    h.fake.setDefault({ kind: 'hold', until: held });

    const background = (await start(h, user, startBody(user, 'slow', ask('bg')))).json<{ instanceId: string }>().instanceId;
    const theirs = (await start(h, bystander, startBody(bystander, 'slow', ask('theirs')))).json<{ instanceId: string }>().instanceId;
    const sync = runLadder(h, user, 'slow', ask('sync'));
    await waitFor(() => h.fake.requests.length >= 3, 15_000, 'three model calls in flight');
    const [syncRow] = await h.testApp.database.query<{ id: string }>(`select id from instances where mode = 'sync' and account_id = (select id from accounts where username = $1)`, [user.username]);
    // And one queued, written as a plain pending row (no notice: the workers find it at their next poll, if at all).
    const [queued] = await h.testApp.database.query<{ id: string }>(
      `insert into instances (ladder_id, ladder_version, author, slug, account_id, mode, model, input, knobs, status)
       select l.id, 1, $1, 'slow', a.id, 'async', 'gpt-4o-mini', 'q', '{}'::jsonb, 'pending'
       from accounts a join ladders l on l.account_id = a.id and l.slug = 'slow' where a.username = $1 returning id`,
      [user.username],
    );

    const res = await h.app.inject({ method: 'POST', url: `/v1/admin/accounts/${user.username}/disable`, headers: adminHeaders });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ disabled: true, runs_cancelled: 3 });

    expect(await instanceRow(h, queued!.id)).toMatchObject({ status: 'cancelled', error: CANCELLED });
    for (const id of [background, syncRow!.id]) {
      await waitFor(async () => (await instanceRow(h, id)).status === 'cancelled', 5_000, `run ${id} cancelled`);
      expect(await instanceRow(h, id)).toMatchObject({ status: 'cancelled', error: CANCELLED, cancel_requested_at: expect.any(Date) });
    }
    expect((await sync).statusCode).not.toBe(200);
    expect((await instanceRow(h, theirs)).status).toBe('running');
    release();
    await waitFor(async () => (await instanceRow(h, theirs)).status === 'completed', 15_000, 'the bystander’s run completes');
  });
});
