// Deliveries when a run ends: queued with the outcome (synchronous, background, failed,
// cancelled runs), signed as Standard Webhooks says (checked with the `standardwebhooks`
// package), retried with backoff against a receiver that fails or hangs, refused at connect
// time for a non-public address, and an endpoint failing for 3 days disabled. The clock the
// deliveries are scheduled by is injected, so retries are due without waiting.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { minimalLadder } from '../ladders/examples.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { build, createUser, type TestApp } from '../helpers/build.js';
import { waitFor } from '../helpers/instances.js';

type User = Awaited<ReturnType<typeof createUser>>;

describe('webhook deliveries', () => {
  let fake: FakeVendor;
  let receiver: WebhookReceiver;
  let t: TestApp;
  let user: User;
  let now = Date.now();
  const clock = () => now;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    receiver = await startWebhookReceiver();
    // No background senders: each test makes the attempts itself (runOnce), at the clock it sets.
    t = await build({ WORKER_CONCURRENCY: '0', PROVIDER_BASE_URL_OPENAI: fake.baseUrl, WEBHOOK_TIMEOUT_MS: '500' }, { clock });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await fake?.close();
  });
  beforeEach(async () => {
    now = Date.now();
    fake.reset();
    receiver.received.length = 0;
    receiver.script([]);
    user = await createUser(t.app, undefined, 'manage');
    await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
    await t.app.inject({ method: 'PUT', url: `/v1/${user.username}/minimal`, headers: user.headers, payload: { config: minimalLadder } });
  });
  afterEach(async () => {
    // Whatever a test left due is not the next test's.
    await t.database.query(`update webhook_deliveries set status = 'failed' where status in ('pending', 'sending')`);
  });

  const addEndpoint = async (payload: Record<string, unknown> = {}) => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: user.headers, payload: { url: receiver.url, ...payload } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: string; secret: string }>();
  };
  const runSync = (content = 'hello') =>
    t.app.inject({ method: 'POST', url: `/v1/${user.username}/minimal/chat/completions`, headers: user.headers, payload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] } });
  const deliveries = async (endpointId: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/webhooks/${endpointId}/deliveries`, headers: user.headers });
    expect(res.statusCode).toBe(200);
    return res.json<{ data: Array<Record<string, any>> }>().data;
  };
  const verify = (secret: string, i: number) => {
    const r = receiver.received[i]!;
    return new StandardWebhook(secret).verify(r.body, r.headers) as Record<string, any>;
  };

  it('a completed synchronous run: one signed message whose data is the instance as GET answers it', async () => {
    const endpoint = await addEndpoint();
    const run = await runSync();
    expect(run.statusCode).toBe(200);
    const instanceId = run.json<{ id: string }>().id.replace(/^ldr-/, '');
    expect(await t.app.webhookDispatcher.runOnce()).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const message = verify(endpoint.secret, 0);
    const instance = await t.app.inject({ method: 'GET', url: `/v1/pipelines/instances/${instanceId}`, headers: user.headers });
    expect(message).toEqual({ type: 'instance.completed', timestamp: instance.json().finished_at, data: instance.json() });
    const headers = receiver.received[0]!.headers;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['user-agent']).toBe('ladder-webhooks/1');
    const [delivery] = await deliveries(endpoint.id);
    expect(delivery).toMatchObject({ id: headers['webhook-id'], event_type: 'instance.completed', instance_id: instanceId, status: 'delivered', next_attempt_at: null });
    expect(delivery!.attempts).toEqual([{ attempt: 1, started_at: expect.any(String), status_code: 200, latency_ms: expect.any(Number), error: null }]);
    // Nothing is due any more.
    expect(await t.app.webhookDispatcher.runOnce()).toBe(0);
  });

  it('a failed run sends instance.failed, only to the endpoints that asked for it', async () => {
    const all = await addEndpoint();
    const completedOnly = await addEndpoint({ events: ['instance.completed'] });
    fake.setDefault({ kind: 'error', status: 401, message: 'bad key' });
    expect((await runSync()).statusCode).toBeGreaterThanOrEqual(400);
    expect(await t.app.webhookDispatcher.runOnce()).toBe(1);
    const message = verify(all.secret, 0);
    expect(message).toMatchObject({ type: 'instance.failed', data: { status: 'failed', error: { code: expect.any(String) } } });
    expect(await deliveries(completedOnly.id)).toEqual([]);
  });

  it('a background run cancelled while pending sends instance.cancelled', async () => {
    const endpoint = await addEndpoint();
    const started = await t.app.inject({
      method: 'POST', url: '/v1/pipelines/instances', headers: user.headers,
      payload: { author: user.username, template: 'minimal', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
    });
    const { instanceId } = started.json<{ instanceId: string }>();
    expect((await t.app.inject({ method: 'POST', url: `/v1/pipelines/instances/${instanceId}/cancel`, headers: user.headers })).statusCode).toBe(200);
    expect(await t.app.webhookDispatcher.runOnce()).toBe(1);
    expect(verify(endpoint.secret, 0)).toMatchObject({ type: 'instance.cancelled', data: { instanceId, status: 'cancelled' } });
  });

  it('a receiver that fails twice: retried after about 5 s, then 10 s, with the same id and body; delivered on the third attempt', async () => {
    const endpoint = await addEndpoint();
    receiver.script([500, 503]);
    await runSync();
    const t0 = now;
    expect(await t.app.webhookDispatcher.runOnce()).toBe(1);
    let [delivery] = await deliveries(endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: [{ attempt: 1, status_code: 500, error: 'The receiver answered 500.' }] });
    const retry1 = Date.parse(delivery!.next_attempt_at) - t0;
    expect(retry1).toBeGreaterThanOrEqual(5000);
    expect(retry1).toBeLessThanOrEqual(5500);
    // Not due before its time.
    now = t0 + 4_900;
    expect(await t.app.webhookDispatcher.runOnce()).toBe(0);
    now = t0 + 5_500;
    expect(await t.app.webhookDispatcher.runOnce()).toBe(1);
    [delivery] = await deliveries(endpoint.id);
    const retry2 = Date.parse(delivery!.next_attempt_at) - now;
    expect(retry2).toBeGreaterThanOrEqual(10_000);
    expect(retry2).toBeLessThanOrEqual(11_000);
    now += 11_000;
    expect(await t.app.webhookDispatcher.runOnce()).toBe(1);
    [delivery] = await deliveries(endpoint.id);
    expect(delivery).toMatchObject({ status: 'delivered', next_attempt_at: null });
    expect(delivery!.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 503, 200]);
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([delivery!.id]));
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
  });

  it('a receiver that never answers: the attempt ends at the timeout and is retried', async () => {
    const endpoint = await addEndpoint();
    receiver.script(['hang']);
    await runSync();
    expect(await t.app.webhookDispatcher.runOnce()).toBe(1);
    const [delivery] = await deliveries(endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: [{ attempt: 1, status_code: null, error: 'No complete answer within 500 ms.' }] });
    expect(delivery!.attempts[0].latency_ms).toBeGreaterThanOrEqual(450);
    now += 5_500;
    expect(await t.app.webhookDispatcher.runOnce()).toBe(1);
    expect((await deliveries(endpoint.id))[0]).toMatchObject({ status: 'delivered' });
  });

  it('retries stop 24 hours after the delivery was queued: given up at the next failure', async () => {
    const endpoint = await addEndpoint();
    receiver.script([], 500);
    await runSync();
    expect(await t.app.webhookDispatcher.runOnce()).toBe(1);
    now += 24 * 3600_000 - 60_000;
    expect(await t.app.webhookDispatcher.runOnce()).toBe(1);
    expect((await deliveries(endpoint.id))[0]).toMatchObject({ status: 'pending' });
    now += 3600_000;
    expect(await t.app.webhookDispatcher.runOnce()).toBe(1);
    const [delivery] = await deliveries(endpoint.id);
    expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null, finished_at: expect.any(String) });
    expect(delivery!.attempts).toHaveLength(3);
  });

  it('an endpoint failing for 3 days is disabled, says why, is sent nothing more, and can be enabled again', async () => {
    const endpoint = await addEndpoint();
    receiver.script([], 500);
    await runSync();
    const t0 = now;
    await t.app.webhookDispatcher.runOnce();
    let view = (await t.app.inject({ method: 'GET', url: `/v1/webhooks/${endpoint.id}`, headers: user.headers })).json();
    expect(view).toMatchObject({ enabled: true, failing_since: new Date(t0).toISOString(), disabled_at: null });
    // A second delivery queued, and both still failing a day, then three days later.
    await runSync('second');
    now = t0 + 24 * 3600_000;
    expect(await t.app.webhookDispatcher.runOnce()).toBe(2);
    view = (await t.app.inject({ method: 'GET', url: `/v1/webhooks/${endpoint.id}`, headers: user.headers })).json();
    expect(view.enabled).toBe(true);
    await runSync('third');
    now = t0 + 3 * 24 * 3600_000 + 1000;
    await t.app.webhookDispatcher.runOnce();
    view = (await t.app.inject({ method: 'GET', url: `/v1/webhooks/${endpoint.id}`, headers: user.headers })).json();
    expect(view).toMatchObject({
      enabled: false,
      disabled_at: new Date(now).toISOString(),
      disabled_reason: 'Disabled after 3 days in which every delivery attempt failed; fix the receiver, then PATCH the endpoint with "enabled": true.',
    });
    // Disabled: a new run queues nothing for it.
    const before = (await deliveries(endpoint.id)).length;
    await runSync('fourth');
    expect(await deliveries(endpoint.id)).toHaveLength(before);
    const enabled = await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${endpoint.id}`, headers: user.headers, payload: { enabled: true } });
    expect(enabled.json()).toMatchObject({ enabled: true, disabled_at: null, disabled_reason: null, failing_since: null });
  });

  it('a URL that reaches a non-public address is refused at connection time, whatever was saved', async () => {
    const guarded = await build({ WORKER_CONCURRENCY: '0', ALLOW_PRIVATE_ENDPOINTS: 'false' }, { database: t.database, clock });
    try {
      const endpoint = await addEndpoint();
      // As if the name had resolved to a public address when it was saved (DNS rebinding).
      await t.database.query('update webhook_endpoints set url = $2 where id = $1', [endpoint.id, receiver.url.replace('http:', 'https:')]);
      await runSync();
      expect(await guarded.app.webhookDispatcher.runOnce()).toBe(1);
      expect(receiver.received).toHaveLength(0);
      expect((await deliveries(endpoint.id))[0]).toMatchObject({
        status: 'pending',
        attempts: [{ status_code: null, error: 'Refused: the URL host resolves to a loopback, private, link-local or metadata address.' }],
      });
    } finally {
      await guarded.close();
    }
  });

  it('POST /v1/webhooks/{id}/test sends a signed webhook.test at once and answers its delivery', async () => {
    const endpoint = await addEndpoint();
    const res = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/test`, headers: user.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ object: 'webhook.delivery', webhook_id: endpoint.id, event_type: 'webhook.test', instance_id: null, status: 'delivered' });
    expect(verify(endpoint.secret, 0)).toMatchObject({ type: 'webhook.test', data: { webhook_id: endpoint.id } });
  });

  it('after a rotation both secrets sign for a while; the message verifies under each', async () => {
    const endpoint = await addEndpoint();
    const rotated = (await t.app.inject({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/rotate-secret`, headers: user.headers })).json<{ secret: string }>();
    expect(rotated.secret).not.toBe(endpoint.secret);
    await t.app.inject({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/test`, headers: user.headers });
    expect(receiver.received[0]!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verify(rotated.secret, 0).type).toBe('webhook.test');
    expect(verify(endpoint.secret, 0).type).toBe('webhook.test');
    // A day later only the new one signs.
    now += 24 * 3600_000 + 1000;
    receiver.received.length = 0;
    const res = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/test`, headers: user.headers });
    expect(res.json().status).toBe('delivered');
    expect(receiver.received[0]!.headers['webhook-signature']!.split(' ')).toHaveLength(1);
  });
});

describe('webhook deliveries from the background senders', () => {
  it('a background run that completes is delivered without anyone asking (WORKER_CONCURRENCY > 0)', async () => {
    const fake = await startFakeOpenAI();
    const receiver = await startWebhookReceiver();
    const t = await build({ WORKER_POLL_MS: '100', PROVIDER_BASE_URL_OPENAI: fake.baseUrl });
    try {
      const user = await createUser(t.app, undefined, 'manage');
      await t.app.inject({ method: 'POST', url: '/v1/providers', headers: user.headers, payload: { provider: 'openai', api_key: fake.apiKey } });
      await t.app.inject({ method: 'PUT', url: `/v1/${user.username}/minimal`, headers: user.headers, payload: { config: minimalLadder } });
      const { secret } = (await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: user.headers, payload: { url: receiver.url } })).json<{ secret: string }>();
      const started = await t.app.inject({
        method: 'POST', url: '/v1/pipelines/instances', headers: user.headers,
        payload: { author: user.username, template: 'minimal', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'bg' }] },
      });
      const { instanceId } = started.json<{ instanceId: string }>();
      await waitFor(() => receiver.received.length > 0, 15_000, 'the delivery');
      const message = new StandardWebhook(secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers) as Record<string, any>;
      expect(message).toMatchObject({ type: 'instance.completed', data: { instanceId, mode: 'async', status: 'completed' } });
    } finally {
      await t.close();
      await receiver.close();
      await fake.close();
    }
  });
});
