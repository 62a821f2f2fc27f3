// A key's ladder access list covers the runs of those ladders (issue 16 item 5; docs/pipelines.md):
// a key that may not see a ladder gets, for its runs, exactly what it gets for runs that do not
// exist, on every route: start, Idempotency-Key replay, read, trace, events, cancel and list.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createKey } from '../helpers/build.js';
import { minimalLadder } from '../ladders/examples.js';
import { ask, instanceCount, runLadder, saveLadder, startHarness, userWithOpenAI, type Harness, type User } from '../e2e/ladder-harness.js';
import { cancel, getInstance, getTrace, list, notFoundBody, start, startBody, type Headers } from './pipelines-helpers.js';

const ladderNotFoundBody = (path: string) =>
  JSON.stringify({ error: { message: `Ladder "${path}" was not found.`, type: 'invalid_request_error', code: 'ladder_not_found', param: null } });

describe('a key’s ladder access list and the runs of its ladders', () => {
  let h: Harness;
  let alice: User;
  /** Keys of alice's account: one that sees only alice/public, one that sees all but alice/secret, one that sees alice/*. */
  let onlyPublic: User;
  let notSecret: User;
  let wholeAuthor: User;

  const withKey = async (mode: 'whitelist' | 'blacklist', ladders: string[]): Promise<User> => {
    const { key } = await createKey(h.app, alice.username, { mode, ladders });
    return { ...alice, headers: { authorization: `Bearer ${key}` } };
  };
  const events = (user: User, id: string) =>
    h.app.inject({ method: 'GET', url: `/v1/pipelines/instances/${id}/events`, headers: user.headers });
  const startRun = async (user: User, template: string, headers: Headers = {}, content = 'hi') => {
    const res = await start(h, user, startBody(alice, template, ask(content)), headers);
    expect(res.statusCode, res.body).toBe(202);
    return res.json<{ instanceId: string }>().instanceId;
  };
  /** Every id the key lists, page by page (`limit` a page), checking the pages join up. */
  const listAll = async (user: User, query: string, limit: number) => {
    const ids: string[] = [];
    let after = '';
    for (let page = 0; page < 50; page++) {
      const res = await list(h, user, `?limit=${limit}${query}${after}`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json<{ data: Array<{ instanceId: string }>; has_more: boolean; next_cursor: string | null }>();
      ids.push(...body.data.map((i) => i.instanceId));
      if (!body.has_more) {
        expect(body.next_cursor).toBeNull();
        return ids;
      }
      expect(body.data).toHaveLength(limit);
      after = `&after=${body.next_cursor}`;
    }
    throw new Error('more than 50 pages');
  };

  beforeAll(async () => {
    // No workers: started runs stay pending, so cancel has something to cancel.
    h = await startHarness({ WORKER_CONCURRENCY: '0' });
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    h.fake.reset();
    alice = await userWithOpenAI(h);
    await saveLadder(h, alice, 'public', minimalLadder);
    await saveLadder(h, alice, 'secret', minimalLadder);
    onlyPublic = await withKey('whitelist', [`${alice.username}/public`]);
    notSecret = await withKey('blacklist', [`${alice.username}/secret`]);
    wholeAuthor = await withKey('whitelist', [`${alice.username}/*`]);
  });

  it('answers an Idempotency-Key replay of another key’s run of an excluded ladder as an unknown ladder, and hands out nothing', async () => {
    const key = { 'idempotency-key': 'report-1' };
    const id = await startRun(alice, 'secret', key);
    const count = await instanceCount(h);
    for (const excluded of [onlyPublic, notSecret]) {
      const replay = await start(h, excluded, startBody(alice, 'secret', ask('hi')), key);
      expect(replay.statusCode).toBe(404);
      expect(replay.body).toBe(ladderNotFoundBody(`${alice.username}/secret`));
      expect(replay.headers['idempotent-replayed']).toBeUndefined();
      expect(replay.headers.location).toBeUndefined();
      expect(replay.body).not.toContain(id);
      // Byte for byte what a start of the ladder without a key answers.
      const fresh = await start(h, excluded, startBody(alice, 'secret', ask('hi')));
      expect(fresh.statusCode).toBe(404);
      expect(fresh.body).toBe(replay.body);
    }
    expect(await instanceCount(h)).toBe(count);
    // A key that may see the ladder still gets the replay.
    const allowed = await start(h, wholeAuthor, startBody(alice, 'secret', ask('hi')), key);
    expect(allowed.statusCode).toBe(202);
    expect(allowed.headers['idempotent-replayed']).toBe('true');
    expect(allowed.json()).toEqual({ instanceId: id, status: 'pending' });
  });

  it('answers read, trace, events and cancel of a run of an excluded ladder exactly as for an unknown id, and cancels nothing', async () => {
    const id = await startRun(alice, 'secret');
    for (const excluded of [onlyPublic, notSecret]) {
      for (const res of [await getInstance(h, excluded, id), await getTrace(h, excluded, id), await events(excluded, id), await cancel(h, excluded, id)]) {
        expect(res.statusCode).toBe(404);
        expect(res.body).toBe(notFoundBody(id));
      }
    }
    const [row] = await h.testApp.database.query<{ status: string; cancel_requested_at: Date | null }>(
      'select status, cancel_requested_at from instances where id = $1', [id]);
    expect(row).toEqual({ status: 'pending', cancel_requested_at: null });
    // Keys that may see it: the owner's unrestricted key and alice/*.
    expect((await getInstance(h, wholeAuthor, id)).json()).toMatchObject({ instanceId: id, template: 'secret', status: 'pending' });
    expect((await getTrace(h, wholeAuthor, id)).statusCode).toBe(200);
    expect((await cancel(h, alice, id)).json()).toMatchObject({ instanceId: id, status: 'cancelled' });
  });

  it('leaves runs of excluded ladders out of the list, with and without template=, across pages', async () => {
    // Interleaved, so that pages of the filtered list skip rows in the middle of the order.
    const publicIds: string[] = [];
    const all: string[] = [];
    for (let i = 0; i < 4; i++) {
      const p = await startRun(alice, 'public', {}, `p${i}`);
      const s = await startRun(alice, 'secret', {}, `s${i}`);
      publicIds.unshift(p);
      all.unshift(s, p);
    }
    for (const limited of [onlyPublic, notSecret]) {
      for (const limit of [1, 2, 3, 100]) expect(await listAll(limited, '', limit)).toEqual(publicIds);
      expect(await listAll(limited, '&template=secret', 2)).toEqual([]);
      expect(await listAll(limited, `&author=${alice.username}&template=public`, 3)).toEqual(publicIds);
    }
    expect(await listAll(wholeAuthor, '', 3)).toEqual(all);
    expect(await listAll(alice, '&template=secret', 1)).toEqual(all.filter((id) => !publicIds.includes(id)));
  });

  it('hides the synchronous runs of an excluded ladder too', async () => {
    const sync = await runLadder(h, alice, 'secret', ask('hello'));
    expect(sync.statusCode, sync.body).toBe(200);
    const id = sync.headers['x-ladder-instance'] as string;
    expect((await getInstance(h, alice, id)).statusCode).toBe(200);
    for (const res of [await getInstance(h, onlyPublic, id), await getTrace(h, onlyPublic, id), await events(onlyPublic, id)]) {
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe(notFoundBody(id));
    }
    expect(await listAll(onlyPublic, '', 10)).toEqual([]);
    expect(await listAll(alice, '', 10)).toEqual([id]);
    // Running the ladder itself was already refused to the key.
    const refused = await runLadder(h, onlyPublic, 'secret', ask('hello'));
    expect(refused.statusCode).toBe(404);
    expect(refused.body).toBe(ladderNotFoundBody(`${alice.username}/secret`));
  });
});
