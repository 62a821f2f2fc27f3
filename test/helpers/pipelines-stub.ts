// Stand-ins for the pipelines API routes the web UI calls (list, read, cancel), following the
// contract of docs/pipelines.md, for as long as this branch lacks them. Registered only when the
// real routes are missing, so the browser tests run unchanged once they exist.
import type { FastifyInstance } from 'fastify';
import { and, desc, eq, lt, or, type SQL } from 'drizzle-orm';
import { instances } from '../../src/db/schema.js';
import { instanceNotFound } from '../../src/routes/pipelines/events.js';
import { presentInstance } from '../../src/routes/pipelines/present-instance.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function pipelinesStub(app: FastifyInstance): Promise<void> {
  if (app.hasRoute({ method: 'GET', url: '/v1/pipelines/instances/:id' })) return;
  await app.register(async (authed) => {
    authed.addHook('onRequest', authed.requireApiKey);

    const own = async (id: string, accountId: string) => {
      const row = UUID_RE.test(id) ? await app.instances.get(id) : null;
      if (!row || row.accountId !== accountId) throw instanceNotFound(id);
      return row;
    };

    authed.get('/v1/pipelines/instances', async (request) => {
      const q = request.query as Record<string, string | undefined>;
      const limit = Math.min(100, Number(q.limit ?? 20));
      const conditions: SQL[] = [eq(instances.accountId, request.principal.accountId)];
      if (q.status) conditions.push(eq(instances.status, q.status as never));
      if (q.author) conditions.push(eq(instances.author, q.author));
      if (q.template) conditions.push(eq(instances.slug, q.template));
      if (q.after) {
        const [at, id] = Buffer.from(q.after, 'base64url').toString().split('|');
        const when = new Date(at!);
        conditions.push(or(lt(instances.createdAt, when), and(eq(instances.createdAt, when), lt(instances.id, id!)))!);
      }
      const rows = await app.db.select().from(instances).where(and(...conditions)).orderBy(desc(instances.createdAt), desc(instances.id)).limit(limit + 1);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const hasMore = rows.length > limit;
      return {
        object: 'list',
        data: page.map(presentInstance),
        has_more: hasMore,
        next_cursor: hasMore && last ? Buffer.from(`${last.createdAt.toISOString()}|${last.id}`).toString('base64url') : null,
      };
    });

    authed.get('/v1/pipelines/instances/:id', async (request) => presentInstance(await own((request.params as { id: string }).id, request.principal.accountId)));

    authed.post('/v1/pipelines/instances/:id/cancel', async (request) => {
      const row = await own((request.params as { id: string }).id, request.principal.accountId);
      await app.db.update(instances).set({ cancelRequestedAt: new Date() }).where(eq(instances.id, row.id));
      return presentInstance((await app.instances.get(row.id))!);
    });
  });
}
