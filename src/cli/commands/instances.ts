// Instances: the record of every ladder run. The status is printed as stored.
import type { SQL } from 'drizzle-orm';
import { notFound } from '../../errors.js';
import type { InstanceRow } from '../../services/instances.js';
import { integer, ladderRef, required, text, UUID_RE, type Command } from '../command.js';

function summary(row: InstanceRow) {
  return {
    id: row.id,
    status: row.status,
    ladder: `${row.author}/${row.slug}@v${row.ladderVersion}`,
    model: row.model,
    mode: row.mode,
    created_at: row.createdAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
    spend_usd: row.spendUsd,
    model_calls: row.modelCalls,
  };
}

export const instanceCommands: Command[] = [
  {
    name: 'list-instances',
    args: '[--account U] [--ladder author/slug] [--status S] [--limit N]',
    details: '--account: runs made by that account; --ladder: runs of that ladder, whoever made them.',
    summary: 'list ladder runs, newest first (50 unless --limit says otherwise)',
    options: { account: { type: 'string' }, ladder: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' } },
    run: async (context, _args, flags) => {
      const { db } = await context.database();
      const [{ and, desc, eq }, { instances }, { findAccount }] = await Promise.all([
        import('drizzle-orm'), import('../../db/schema.js'), import('../../services/accounts.js'),
      ]);
      const filters: SQL[] = [];
      const account = text(flags.account);
      if (account) filters.push(eq(instances.accountId, (await findAccount(db, account)).id));
      if (flags.ladder !== undefined) {
        const [author, slug] = ladderRef(text(flags.ladder));
        filters.push(eq(instances.author, author), eq(instances.slug, slug));
      }
      const status = text(flags.status);
      if (status) filters.push(eq(instances.status, status as InstanceRow['status']));
      const rows = await db
        .select()
        .from(instances)
        .where(and(...filters))
        .orderBy(desc(instances.createdAt))
        .limit(Math.max(1, integer(flags.limit, '--limit') ?? 50));
      return { data: rows.map(summary), columns: ['id', 'status', 'ladder', 'model', 'created_at', 'finished_at', 'spend_usd'] };
    },
  },
  {
    name: 'show-instance',
    args: '<instance id>',
    summary: 'one run: status, ladder, model, times, spend, usage, answer or error',
    run: async (context, [id]) => {
      const instanceId = required(id, 'instance id');
      const { createInstanceService } = await import('../../services/instances.js');
      const row = UUID_RE.test(instanceId) ? await createInstanceService((await context.database()).db).get(instanceId) : null;
      if (!row) throw notFound('instance_not_found', `No instance has id "${instanceId}".`);
      return { ...summary(row), usage: row.usage, knobs: row.knobs, answer: row.answer, error: row.error };
    },
  },
];
