// A caller that hangs up cancels its run: calls in flight are aborted, the row says cancelled.
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimalLadder } from '../ladders/examples.js';
import { ask, saveLadder, startHarness, userWithOpenAI, type Harness } from './ladder-harness.js';

describe('client disconnect', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('cancels the run and records it as cancelled with what it had used', async () => {
    const user = await userWithOpenAI(h);
    await saveLadder(h, user, 'slow', minimalLadder);
    h.fake.script({ kind: 'delay', ms: 0 }, { kind: 'delay', ms: 5000 });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = h.app.server.address() as AddressInfo;

    const instanceId = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: `/v1/${user.username}/slow/chat/completions`, headers: { ...user.headers, 'content-type': 'application/json' } });
      req.on('error', () => {});
      req.end(JSON.stringify(ask('x')));
      // The header is only sent with the answer, so find the row the run created instead.
      const poll = setInterval(async () => {
        if (h.fake.requests.length < 2) return;
        clearInterval(poll);
        const [row] = await h.testApp.database.query<{ id: string }>('select id from instances where account_id = $1', [user.id]);
        req.destroy();
        row ? resolve(row.id) : reject(new Error('no instance row'));
      }, 20);
    });

    let row: Record<string, any> | undefined;
    for (let i = 0; i < 100 && row?.status !== 'cancelled'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      [row] = await h.testApp.database.query('select * from instances where id = $1', [instanceId]);
    }
    expect(row).toMatchObject({
      status: 'cancelled',
      error: { status: 499, type: 'execution_error', code: 'run_cancelled', message: 'The run was cancelled before it finished.' },
      model_calls: 2,
      answer: null,
    });
    expect(row!.usage.total_tokens).toBeGreaterThan(0);
    expect(row!.trace[1].nodes[0]).toMatchObject({ survived: false, provider: null });
  });
});
