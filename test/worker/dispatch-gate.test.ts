// A background run prepares its next call while the last checkpoint is written, but the vendor
// call itself waits for that checkpoint: no call is sent past a finished call a crash could lose.
// A synchronous run (never resumed) does not wait.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { createPriceTable } from '../../src/pricing/prices.js';
import type { ChatRequest, ChatResult } from '../../src/providers/types.js';
import { createRunExecutor } from '../../src/worker/execute.js';
import type { LeaseKeeper, RunKind } from '../../src/worker/lease.js';
import { testLimits } from '../ladders/engine/interpreter-harness.js';
import { minimalLadder } from '../ladders/examples.js';
import { openTestDatabase } from '../helpers/database.js';
import { callKeys, insertPending } from '../helpers/instances.js';

let database: Database;
let accountId: string;
beforeAll(async () => {
  database = await openTestDatabase();
  [{ id: accountId }] = (await database.query<{ id: string }>(`insert into accounts (username) values ('gate-owner') returning id`)) as [{ id: string }];
});
afterAll(async () => {
  await database?.close();
});

/** Runs the two-call ladder with every checkpoint write held back 100 ms; returns what each vendor call found stored when it arrived. */
async function run(kind: RunKind) {
  const id = await insertPending(database, { ladderId: null, ladderVersion: 1, author: 'a', slug: 's', accountId, input: 'q' }, { status: 'running', fence: 1, attempts: 1, started_at: new Date(), mode: kind === 'sync' ? 'sync' : 'async' });
  const slowFlush: Pick<Database, 'query' | 'queryRelaxed'> = {
    query: (text, params, name) => database.query(text, params, name),
    queryRelaxed: async (name, text, params) => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return database.queryRelaxed(name, text, params);
    },
  };
  const storedAtArrival: string[][] = [];
  const route = async (request: ChatRequest): Promise<ChatResult> => {
    storedAtArrival.push(await callKeys(database, id));
    const content = `echo ${request.messages.length}`;
    return { content, finishReason: 'stop', provider: 'openai', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, attempts: [], upstreamMs: 0 };
  };
  const leases = { track: () => () => {} } as unknown as LeaseKeeper;
  const executor = createRunExecutor({ database: slowFlush, leases, route, prices: createPriceTable() });
  const execution = await executor.execute({
    held: { id, fence: 1, kind, attempts: 1, resumed: false, cancelRequested: false },
    config: minimalLadder, model: 'gpt-4o-mini', input: 'q', knobs: {}, connections: [], limits: testLimits,
  });
  expect(execution.outcome).toBe('finished');
  expect(await callKeys(database, id)).toEqual(['1.draft.1', '1.refine.1']);
  return storedAtArrival;
}

describe('the vendor-call gate', () => {
  it('a background run sends its next call only once the previous call is checkpointed', async () => {
    expect(await run('async')).toEqual([[], ['1.draft.1']]);
  });

  it('a synchronous run does not wait for its checkpoints', async () => {
    expect(await run('sync')).toEqual([[], []]);
  });
});
