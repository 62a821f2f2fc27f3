// Accounts: create, list, show, disable, enable, delete.
import type { AccountDetail, AdminAccountView } from '../../services/account-overview.js';
import { required, seg, text, UsageError, type Command } from '../command.js';

// Loaded on use, so that `--version` and `help` start at once (the same in every command module).
const accounts = () => import('../../services/accounts.js');
const overview = () => import('../../services/account-overview.js');
const audit = () => import('../../services/audit.js');

// The command line lists every matching account; pages of this size keep each query small.
const PAGE = 100;

interface AccountPage {
  data: AdminAccountView[];
  has_more: boolean;
  next_cursor: string | null;
}

export const accountCommands: Command[] = [
  {
    name: 'create-account',
    args: '<username>',
    summary: 'create an account',
    details: 'The username is 3 to 39 lowercase letters, digits and inner hyphens; it is the author in ladder URLs.',
    run: async (context, [username]) => {
      const name = required(username, 'username');
      if (context.server) return context.server().call('POST', '/accounts', { username: name });
      return (await accounts()).createAccount((await context.database()).db, name, (await audit()).CLI_ACTOR);
    },
  },
  {
    name: 'list-accounts',
    args: '[--name TEXT]',
    summary: 'list every account (with --name, those whose username contains TEXT)',
    options: { name: { type: 'string' } },
    run: async (context, _args, flags) => {
      const name = text(flags.name);
      const data: AdminAccountView[] = [];
      if (context.server) {
        // The admin API's cursor pages, followed to the end.
        const api = context.server();
        for (let after: string | null = null; ; ) {
          const query: URLSearchParams = new URLSearchParams({ limit: String(PAGE), ...(name ? { name } : {}), ...(after ? { after } : {}) });
          const page: AccountPage = await api.call<AccountPage>('GET', `/accounts?${query}`);
          data.push(...page.data);
          if (!page.has_more || !page.next_cursor) break;
          after = page.next_cursor;
        }
      } else {
        const { db } = await context.database();
        const { listAccounts } = await overview();
        for (let after: string | undefined; ; ) {
          const page = await listAccounts(db, { limit: PAGE, ...(name ? { name } : {}), ...(after ? { after } : {}) });
          data.push(...page.accounts);
          if (!page.hasMore) break;
          after = page.accounts.at(-1)!.username;
        }
      }
      return { data, columns: ['username', 'id', 'created_at', 'disabled', 'key_count'] };
    },
  },
  {
    name: 'show-account',
    args: '<username>',
    summary: "show an account: keys count, limits, this month's usage, whether it is disabled",
    run: async (context, [username]) => {
      const name = required(username, 'username');
      if (context.server) return context.server().call<AccountDetail>('GET', `/accounts/${seg(name)}`);
      return (await overview()).accountDetail(await context.database(), name, Date.now());
    },
  },
  ...(['disable', 'enable'] as const).map((verb): Command => ({
    name: `${verb}-account`,
    args: '<username>',
    summary:
      verb === 'disable'
        ? "disable an account: its keys answer 401 account_disabled on every server at once, its runs in flight are cancelled"
        : 'enable a disabled account: its keys work again',
    run: async (context, [username]) => {
      const name = required(username, 'username');
      const disabled = verb === 'disable';
      if (context.server) {
        // The route answers the account after the change; whether it changed is read before.
        const api = context.server();
        const before = await api.call<AccountDetail>('GET', `/accounts/${seg(name)}`);
        const after = await api.call<{ runs_cancelled: number }>('POST', `/accounts/${seg(name)}/${verb}`);
        return { username: name, disabled, changed: before.disabled !== disabled, runs_cancelled: after.runs_cancelled };
      }
      const { setAccountDisabled } = await import('../../services/account-status.js');
      const change = await setAccountDisabled(await context.database(), name, disabled, (await audit()).CLI_ACTOR);
      return { username: name, disabled, changed: change.changed, runs_cancelled: change.pendingCancelled + change.runningCancelled };
    },
  })),
  {
    name: 'delete-account',
    args: '<username> --yes',
    summary: 'delete an account with its keys, provider connections, ladders and runs',
    options: { yes: { type: 'boolean' } },
    run: async (context, [username], flags) => {
      const name = required(username, 'username');
      if (!flags.yes) throw new UsageError(`deleting "${name}" also deletes its keys, provider connections, ladders and runs; add --yes to confirm`);
      if (context.server) await context.server().call('DELETE', `/accounts/${seg(name)}`);
      else await (await accounts()).deleteAccount((await context.database()).db, name, (await audit()).CLI_ACTOR);
      return { deleted: name };
    },
  },
];
