// The audit log: who changed what, when, newest first.
import type { AuditEntryView } from '../../services/audit.js';
import { integer, text, UsageError, type Command } from '../command.js';

const MAX = 1000;
// The admin API's largest page, when a server holds the embedded database.
const SERVER_PAGE = 100;

interface AuditPage {
  data: AuditEntryView[];
  has_more: boolean;
  next_cursor: string | null;
}

export const auditCommands: Command[] = [
  {
    name: 'audit',
    args: '[--account USERNAME] [--action ACTION] [--limit N]',
    summary: 'show the audit log of administrative changes, newest first',
    details: `--limit is 1 to ${MAX} (default 50). Actions: account.created, account.disabled, api_key.created, api_key.revoked, ... (docs/accounts.md).`,
    options: { account: { type: 'string' }, action: { type: 'string' }, limit: { type: 'string' } },
    run: async (context, _args, flags) => {
      const limit = integer(flags.limit, '--limit') ?? 50;
      if (limit < 1 || limit > MAX) throw new UsageError(`--limit must be from 1 to ${MAX}`);
      const { AUDIT_ACTIONS } = await import('../../schemas/accounts.js');
      const action = text(flags.action);
      if (action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(action)) {
        throw new UsageError(`--action must be one of ${AUDIT_ACTIONS.join(', ')}`);
      }
      const account = text(flags.account);
      let entries: AuditEntryView[] = [];
      if (context.server) {
        // Cursor pages of GET /v1/admin/audit until `limit` entries or the end.
        const api = context.server();
        for (let after: string | null = null; entries.length < limit; ) {
          const page = Math.min(SERVER_PAGE, limit - entries.length);
          const query: URLSearchParams = new URLSearchParams({ limit: String(page), ...(account ? { account } : {}), ...(action ? { action } : {}), ...(after ? { after } : {}) });
          const answer: AuditPage = await api.call<AuditPage>('GET', `/audit?${query}`);
          entries.push(...answer.data);
          if (!answer.has_more || !answer.next_cursor) break;
          after = answer.next_cursor;
        }
      } else {
        const { listAudit } = await import('../../services/audit.js');
        ({ entries } = await listAudit((await context.database()).db, {
          limit,
          ...(account ? { username: account } : {}),
          ...(action ? { action: action as (typeof AUDIT_ACTIONS)[number] } : {}),
        }));
      }
      const data = entries.map((e) => ({
        ...e,
        actor: e.actor.type === 'api_key' ? `key ${e.actor.api_key_id}` : e.actor.type,
        account: e.account?.username ?? null,
      }));
      return { data, columns: ['id', 'created_at', 'actor', 'account', 'action', 'target_id', 'details'] };
    },
  },
];
