// Ladder runs: list (with filters) and show one, in the shapes of src/services/admin-instances.ts.
import type { InstanceStatus } from '../../db/schema.js';
import type { instanceSummary } from '../../services/admin-instances.js';
import { integer, ladderRef, required, seg, text, UsageError, type Command } from '../command.js';

const STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'];
const work = () => import('../../services/admin-instances.js');

export const instanceCommands: Command[] = [
  {
    name: 'list-instances',
    args: '[--account U] [--ladder author/slug] [--status S] [--limit N]',
    details: '--account: runs made by that account; --ladder: runs of that ladder, whoever made them. Statuses: pending, running, completed, failed, cancelled.',
    summary: 'list ladder runs, newest first (50 unless --limit says otherwise)',
    options: { account: { type: 'string' }, ladder: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' } },
    run: async (context, _args, flags) => {
      const account = text(flags.account);
      const ladder = flags.ladder === undefined ? undefined : ladderRef(text(flags.ladder));
      const status = text(flags.status);
      if (status !== undefined && !STATUSES.includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
      const limit = integer(flags.limit, '--limit');
      if (limit !== undefined && (limit < 1 || limit > 1000)) throw new UsageError('--limit must be from 1 to 1000');
      const columns = ['id', 'status', 'ladder', 'model', 'created_at', 'finished_at', 'spend_usd'];
      if (context.server) {
        const query = new URLSearchParams();
        if (account) query.set('account', account);
        if (ladder) query.set('ladder', ladder.join('/'));
        if (status) query.set('status', status);
        if (limit !== undefined) query.set('limit', String(limit));
        const { data } = await context.server().call<{ data: Array<ReturnType<typeof instanceSummary>> }>('GET', `/instances${query.size > 0 ? `?${query}` : ''}`);
        return { data, columns };
      }
      const filters = { account, status: status as InstanceStatus | undefined, limit, ladder: ladder && { author: ladder[0], slug: ladder[1] } };
      return { data: await (await work()).listInstances((await context.database()).db, filters), columns };
    },
  },
  {
    name: 'show-instance',
    args: '<instance id>',
    summary: 'one run: status, ladder, model, times, spend, usage, answer or error',
    run: async (context, [id]) => {
      const instanceId = required(id, 'instance id');
      const { showInstance, isInstanceId, unknownInstance } = await work();
      // A malformed id cannot name a run: answered here, the same for both paths.
      if (!isInstanceId(instanceId)) throw unknownInstance(instanceId);
      if (context.server) return context.server().call('GET', `/instances/${seg(instanceId)}`);
      return showInstance((await context.database()).db, instanceId);
    },
  },
];
