// Event streams of a finished run count against SSE_MAX_STREAMS like live ones, until their
// response closes; each account gets only its share; a client that stops reading is dropped
// after SSE_IDLE_TIMEOUT_MS (issue 16 item 3; docs/pipelines-events.md). The clients here are
// raw sockets that never read, and the run's answer is larger than the kernel's socket buffers,
// so the server really is left with bytes nobody takes.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { build, createUser, type TestApp } from '../helpers/build.js';
import { finishInstance, insertInstance } from '../helpers/instance-events.js';
import { eventsOf, openStalled, openStream, type StalledClient } from '../helpers/sse.js';

type User = Awaited<ReturnType<typeof createUser>>;
const eventsUrl = (id: string) => `/v1/pipelines/instances/${id}/events`;
// Loopback sockets take a few MiB before a writer has to wait; this is well past that.
const ANSWER = 'x'.repeat(12 * 1024 * 1024);

async function finishedRun(t: TestApp, user: User): Promise<string> {
  const id = await insertInstance(t.database, { accountId: user.id, author: user.username, slug: 'big' });
  await finishInstance(t.database, id, { status: 'completed', answer: ANSWER });
  return id;
}

describe('streams of a finished run whose clients do not read', () => {
  let t: TestApp;
  let port: number;
  let users: User[];
  let id: Record<string, string>;
  const stalled: StalledClient[] = [];
  const stall = async (user: User, instanceId: string) => {
    const client = await openStalled(() => net.connect(port, '127.0.0.1'), '127.0.0.1', eventsUrl(instanceId), user.headers);
    stalled.push(client);
    return client;
  };
  const open = (user: User, instanceId: string) => openStream(`http://127.0.0.1:${port}${eventsUrl(instanceId)}`, user.headers);

  beforeAll(async () => {
    // Idle clients are never dropped here: only closing frees their streams.
    t = await build({ SSE_MAX_STREAMS: '3', SSE_MAX_STREAMS_PER_ACCOUNT: '2', SSE_IDLE_TIMEOUT_MS: '600000', WORKER_CONCURRENCY: '0' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
    users = [await createUser(t.app), await createUser(t.app), await createUser(t.app)];
    id = {};
    for (const user of users) id[user.id] = await finishedRun(t, user);
  });
  afterEach(() => stalled.splice(0).forEach((c) => c.close()));
  afterAll(() => t?.close());

  it('counts each until it closes: 429 for the account over its share, 503 once all are taken, a slot again once a client leaves', async () => {
    const [a, b, c] = users as [User, User, User];
    const a1 = await stall(a, id[a.id]!);
    expect(a1.head).toMatch(/^HTTP\/1\.1 200 /);
    await stall(a, id[a.id]!);

    const overShare = await open(a, id[a.id]!);
    expect(overShare.status).toBe(429);
    expect(overShare.headers['retry-after']).toBe('5');
    expect(JSON.parse(await overShare.text())).toEqual({
      error: {
        message: 'This account already has 2 event streams open, as many as it may; close one or retry shortly.',
        type: 'rate_limit_error',
        code: 'too_many_account_streams',
        param: null,
      },
    });

    // Another account still gets its stream, whole: the run's events and its terminal event, answer included.
    const read = await open(b, id[b.id]!);
    expect(read.status).toBe(200);
    await read.ended;
    const terminal = eventsOf(read.messages).at(-1)!;
    expect(terminal.event).toBe('instance.completed');
    expect(JSON.parse(terminal.data!).result.choices[0].message.content).toHaveLength(ANSWER.length);

    // The third stream: every slot is taken, so a third account gets 503.
    await stall(b, id[b.id]!);
    const full = await open(c, id[c.id]!);
    expect(full.status).toBe(503);
    expect(JSON.parse(await full.text()).error).toMatchObject({ code: 'too_many_streams', type: 'api_error' });

    // The client that leaves frees its slot, and its account's share.
    a1.close();
    await vi.waitFor(async () => {
      const again = await open(c, id[c.id]!);
      again.close();
      expect(again.status).toBe(200);
    }, { timeout: 5_000, interval: 50 });
  });
});

describe('a client that stops reading', () => {
  let t: TestApp;
  let port: number;
  let user: User;
  let instanceId: string;
  const stalled: StalledClient[] = [];
  beforeAll(async () => {
    // Long enough that a reader slowed by a busy machine (12 MiB to take) is not itself dropped.
    t = await build({ SSE_MAX_STREAMS: '1', SSE_IDLE_TIMEOUT_MS: '2000', WORKER_CONCURRENCY: '0' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
    user = await createUser(t.app);
    instanceId = await finishedRun(t, user);
  });
  afterAll(async () => {
    stalled.splice(0).forEach((c) => c.close());
    await t?.close();
  });

  it('is disconnected after SSE_IDLE_TIMEOUT_MS without the rest of the stream, and its slot is free again', async () => {
    const client = await openStalled(() => net.connect(port, '127.0.0.1'), '127.0.0.1', eventsUrl(instanceId), user.headers);
    stalled.push(client);
    expect(client.head).toMatch(/^HTTP\/1\.1 200 /);
    const refused = await openStream(`http://127.0.0.1:${port}${eventsUrl(instanceId)}`, user.headers);
    expect(refused.status).toBe(429);
    await refused.text();
    // Once the server gives up on the client, the slot is free again (the stream answered in full).
    await vi.waitFor(async () => {
      const again = await openStream(`http://127.0.0.1:${port}${eventsUrl(instanceId)}`, user.headers);
      expect(again.status).toBe(200);
      await again.ended;
      expect(eventsOf(again.messages).at(-1)!.event).toBe('instance.completed');
    }, { timeout: 30_000, interval: 100 });
    // Reading now drains what the kernel holds, then the connection ends: it never got the rest.
    client.resume();
    await client.closed;
    expect(client.received()).toBeLessThan(ANSWER.length);
  }, 60_000);
});
