// A real background run watched live: the worker's event writes announce themselves (NOTIFY), so
// a stream whose polling is far too slow to matter (SSE_POLL_MS 60 s) still shows each step as
// the run takes it, and ends with the instance exactly as GET answers it.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_CHANNEL } from '../../src/services/instance-events.js';
import { finishInterrupted } from '../../src/worker/claim.js';
import { minimalLadder } from '../ladders/examples.js';
import { ask, echo, saveLadder, startHarness, userWithOpenAI, type Harness, type User } from '../e2e/ladder-harness.js';
import { events, insertPending, instance, waitFor, waitForStatus } from '../helpers/instances.js';
import { eventsOf, openStream, type LiveStream, type SseMessage } from '../helpers/sse.js';

const question = 'What is 2+2?';
const draftPrompt = `Question: ${question}\n\n[System Instruction]\nAnswer the question.`;
const refinePrompt = `Question: ${question}\n\nDraft: ${echo(draftPrompt)}\n\n[System Instruction]\nImprove the draft so that it answers the question better. Reply with the improved answer only.`;

/** A promise the test settles by hand: the fake vendor holds a call's answer until then. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const summary = (messages: SseMessage[]) =>
  eventsOf(messages).map((m) => {
    const data = JSON.parse(m.data ?? 'null') as Record<string, unknown>;
    return [m.id, m.event, data.step ?? null];
  });

describe('live events of a real worker run', () => {
  let h: Harness;
  let user: User;
  let base: string;
  let stream: LiveStream | undefined;
  beforeAll(async () => {
    h = await startHarness({ WORKER_CONCURRENCY: '1', SSE_POLL_MS: '60000', SSE_KEEPALIVE_MS: '60000' });
    user = await userWithOpenAI(h);
    await saveLadder(h, user, 'minimal', minimalLadder);
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    stream?.close();
    await h?.close();
  });

  it('streams each step as the worker takes it, then the terminal event equal to GET, then ends', async () => {
    const draft = gate();
    const refine = gate();
    h.fake.script({ kind: 'hold', until: draft.opened }, { kind: 'hold', until: refine.opened });
    const started = await h.app.inject({ method: 'POST', url: '/v1/pipelines/instances', headers: user.headers, payload: { author: user.username, template: 'minimal', ...ask(question) } });
    expect(started.statusCode).toBe(202);
    const { instanceId } = started.json<{ instanceId: string }>();
    stream = await openStream(`${base}/v1/pipelines/instances/${instanceId}/events`, user.headers);
    expect(stream.status).toBe(200);

    // The draft call is held at the vendor: the run has started and is in its first step.
    await stream.until((m) => eventsOf(m).length === 2);
    expect(summary(stream.messages)).toEqual([['1', 'instance.started', null], ['2', 'step.started', 'draft']]);
    expect(h.fake.requests.filter((r) => r.answeredAt !== undefined)).toEqual([]);

    // Written after the stream's first read, so only a NOTIFY can bring them before the next poll in a minute.
    draft.open();
    await stream.until((m) => eventsOf(m).length === 5);
    expect(summary(stream.messages)).toEqual([
      ['1', 'instance.started', null], ['2', 'step.started', 'draft'], ['3', 'node.completed', 'draft'], ['4', 'step.completed', 'draft'], ['5', 'step.started', 'refine'],
    ]);
    expect(JSON.parse(eventsOf(stream.messages)[2]!.data!)).toMatchObject({ step: 'draft', pass: 1, depth: 0, node: 1, provider: 'openai', survived: true, output_excerpt: echo(draftPrompt) });
    // The refine call is held: the run is still under way while the stream shows its progress.
    expect(h.fake.requests.filter((r) => r.answeredAt !== undefined).map((r) => r.body.messages[0].content)).toEqual([draftPrompt]);

    refine.open();
    await stream.ended;
    const events = eventsOf(stream.messages);
    expect(summary(stream.messages)).toEqual([
      ['1', 'instance.started', null], ['2', 'step.started', 'draft'], ['3', 'node.completed', 'draft'], ['4', 'step.completed', 'draft'],
      ['5', 'step.started', 'refine'], ['6', 'node.completed', 'refine'], ['7', 'step.completed', 'refine'], ['8', 'instance.completed', null],
    ]);
    const got = await h.app.inject({ method: 'GET', url: `/v1/pipelines/instances/${instanceId}`, headers: user.headers });
    expect(got.statusCode).toBe(200);
    expect(JSON.parse(events.at(-1)!.data!)).toEqual(got.json());
    expect(got.json()).toMatchObject({ status: 'completed', result: { choices: [{ message: { content: echo(refinePrompt) } }] } });
    // The stream counted itself on the run while it was open, and gave the count back when it ended.
    await waitFor(async () => (await instance(h.testApp.database, instanceId)).watchers === 0, 5_000, 'the count given back');
  });

  it('announces only the end of a run that no stream watches', async () => {
    const notices: string[] = [];
    const unlisten = await h.testApp.database.listen(EVENTS_CHANNEL, (id) => notices.push(id));
    try {
      const started = await h.app.inject({ method: 'POST', url: '/v1/pipelines/instances', headers: user.headers, payload: { author: user.username, template: 'minimal', ...ask(question) } });
      expect(started.statusCode).toBe(202);
      const { instanceId } = started.json<{ instanceId: string }>();
      await waitForStatus(h.testApp.database, instanceId, ['completed']);
      await waitFor(() => notices.includes(instanceId), 5_000, 'the notice of the end');
      // Every event was written (two calls, two steps), and announced once: with the run's end.
      expect((await events(h.testApp.database, instanceId)).map((e) => e.type)).toEqual([
        'instance.started', 'step.started', 'node.completed', 'step.completed', 'step.started', 'node.completed', 'step.completed', 'instance.completed',
      ]);
      expect(notices.filter((id) => id === instanceId)).toEqual([instanceId]);
    } finally {
      await unlisten();
    }
  });

  it('announces the terminal event of a run failed as interrupted (its process died)', async () => {
    const notices: string[] = [];
    const unlisten = await h.testApp.database.listen(EVENTS_CHANNEL, (id) => notices.push(id));
    try {
      const id = await insertPending(h.testApp.database, { ladderId: null, ladderVersion: 1, author: user.username, slug: 'minimal', accountId: user.id, input: 'x' }, {
        mode: 'sync', status: 'running', attempts: 1, fence: 1, claimed_by: 'dead-process', started_at: new Date(Date.now() - 5000), lease_expires_at: new Date(Date.now() - 1000),
      });
      // This call or the worker's own sweep: whichever fails the run announces its event.
      await finishInterrupted(h.testApp.database, 3, []);
      await waitFor(() => notices.includes(id), 5_000, 'the notice');
      expect((await events(h.testApp.database, id)).map((e) => e.type)).toEqual(['instance.failed']);
    } finally {
      await unlisten();
    }
  });
});
