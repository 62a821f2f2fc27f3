// Accounts: create, list, delete.
import { required, seg, UsageError, type Command } from '../command.js';
import type { AccountView } from '../../services/accounts.js';

// Loaded on use, so that `--version` and `help` start at once (the same in every command module).
const accounts = () => import('../../services/accounts.js');
const COLUMNS = ['username', 'id', 'created_at'];

export const accountCommands: Command[] = [
  {
    name: 'create-account',
    args: '<username>',
    summary: 'create an account',
    details: 'The username is 3 to 39 lowercase letters, digits and inner hyphens; it is the author in ladder URLs.',
    run: async (context, [username]) => {
      const name = required(username, 'username');
      if (context.server) return context.server().call('POST', '/accounts', { username: name });
      return (await accounts()).createAccount((await context.database()).db, name);
    },
  },
  {
    name: 'list-accounts',
    args: '',
    summary: 'list every account',
    run: async (context) => {
      const data = context.server
        ? (await context.server().call<{ data: AccountView[] }>('GET', '/accounts')).data
        : await (await accounts()).listAccounts((await context.database()).db);
      return { data, columns: COLUMNS };
    },
  },
  {
    name: 'delete-account',
    args: '<username> --yes',
    summary: 'delete an account with its keys, provider connections, ladders and runs',
    options: { yes: { type: 'boolean' } },
    run: async (context, [username], flags) => {
      const name = required(username, 'username');
      if (!flags.yes) throw new UsageError(`deleting "${name}" also deletes its keys, provider connections, ladders and runs; add --yes to confirm`);
      if (context.server) await context.server().call('DELETE', `/accounts/${seg(name)}`);
      else await (await accounts()).deleteAccount((await context.database()).db, name);
      return { deleted: name };
    },
  },
];
