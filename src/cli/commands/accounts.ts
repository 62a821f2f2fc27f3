// Accounts: create, list, show, disable, enable, delete.
import { required, text, UsageError, type Command } from '../command.js';

// Loaded on use, so that `--version` and `help` start at once (the same in every command module).
const accounts = () => import('../../services/accounts.js');
const overview = () => import('../../services/account-overview.js');
const audit = () => import('../../services/audit.js');

// The command line lists every matching account; pages of this size keep each query small.
const PAGE = 100;

export const accountCommands: Command[] = [
  {
    name: 'create-account',
    args: '<username>',
    summary: 'create an account',
    details: 'The username is 3 to 39 lowercase letters, digits and inner hyphens; it is the author in ladder URLs.',
    run: async (context, [username]) =>
      (await accounts()).createAccount((await context.database()).db, required(username, 'username'), (await audit()).CLI_ACTOR),
  },
  {
    name: 'list-accounts',
    args: '[--name TEXT]',
    summary: 'list every account (with --name, those whose username contains TEXT)',
    options: { name: { type: 'string' } },
    run: async (context, _args, flags) => {
      const { db } = await context.database();
      const { listAccounts } = await overview();
      const name = text(flags.name);
      const data = [];
      for (let after: string | undefined; ; ) {
        const page = await listAccounts(db, { limit: PAGE, ...(name ? { name } : {}), ...(after ? { after } : {}) });
        data.push(...page.accounts);
        if (!page.hasMore) break;
        after = page.accounts.at(-1)!.username;
      }
      return { data, columns: ['username', 'id', 'created_at', 'disabled', 'key_count'] };
    },
  },
  {
    name: 'show-account',
    args: '<username>',
    summary: "show an account: keys count, limits, this month's usage, whether it is disabled",
    run: async (context, [username]) => (await overview()).accountDetail(await context.database(), required(username, 'username'), Date.now()),
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
      const { setAccountDisabled } = await import('../../services/account-status.js');
      const change = await setAccountDisabled(await context.database(), name, verb === 'disable', (await audit()).CLI_ACTOR);
      return { username: name, disabled: verb === 'disable', changed: change.changed, runs_cancelled: change.pendingCancelled + change.runningCancelled };
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
      await (await accounts()).deleteAccount((await context.database()).db, name, (await audit()).CLI_ACTOR);
      return { deleted: name };
    },
  },
];
