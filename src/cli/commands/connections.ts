// A user's provider connections: list, set (create or update), delete. The provider key
// is read from stdin or from a named environment variable, never from the command line,
// where it would stay in the shell's history and in the process list.
import type { ConnectionView } from '../../services/provider-connections.js';
import { integer, required, seg, text, type Command, type Context } from '../command.js';

async function connectionsOf(context: Context, username: string) {
  const { db } = await context.database();
  const [{ loadSecretBox }, { findAccount }, { connectionServiceOptions, createConnectionService }] = await Promise.all([
    import('../../crypto/data-dir-secrets.js'), import('../../services/accounts.js'), import('../../services/provider-connections.js'),
  ]);
  const account = await findAccount(db, username);
  // The API's rule from the same settings: an endpoint the server would refuse to call is refused here too.
  const service = createConnectionService(db, await loadSecretBox(context.config), connectionServiceOptions(context.config, 0));
  return { accountId: account.id, service };
}

export const connectionCommands: Command[] = [
  {
    name: 'list-connections',
    args: '<username>',
    summary: "list a user's provider connections in priority order (never the keys)",
    run: async (context, [username]) => {
      const name = required(username, 'username');
      const columns = ['provider', 'priority', 'label', 'key_prefix', 'endpoint', 'updated_at'];
      if (context.server) return { data: (await context.server().call<{ data: ConnectionView[] }>('GET', `/accounts/${seg(name)}/providers`)).data, columns };
      const { accountId, service } = await connectionsOf(context, name);
      return { data: await service.list(accountId), columns };
    },
  },
  {
    name: 'set-connection',
    args: '<username> <provider> [--key-env VAR] [--label L] [--priority N] [--endpoint URL]',
    summary: "create or update a user's connection to a provider",
    details: [
      'The provider key is read from the environment variable named by --key-env, else from stdin',
      '(typed without echo on a terminal, or piped: `printenv OPENAI_API_KEY | ladder-admin set-connection alice openai`).',
      'Provider ids are those of GET /v1/providers/catalog; custom endpoints (ollama, openai-compatible, ...) need --endpoint,',
      'which is checked as POST /v1/providers checks it (private addresses and http only with ALLOW_PRIVATE_ENDPOINTS=true).',
    ].join('\n'),
    options: { 'key-env': { type: 'string' }, label: { type: 'string' }, priority: { type: 'string' }, endpoint: { type: 'string' } },
    run: async (context, [username, provider], flags) => {
      const name = required(username, 'username');
      const id = required(provider, 'provider');
      const priority = integer(flags.priority, '--priority');
      const label = text(flags.label);
      const endpoint = text(flags.endpoint);
      const apiKey = await context.readSecret(`${id} API key for ${name}: `, text(flags['key-env']));
      const fields = {
        api_key: apiKey,
        ...(priority !== undefined ? { priority } : {}),
        ...(label !== undefined ? { label } : {}),
        ...(endpoint !== undefined ? { endpoint } : {}),
      };
      if (context.server) return context.server().call('PUT', `/accounts/${seg(name)}/providers/${seg(id)}`, fields);
      const { accountId, service } = await connectionsOf(context, name);
      const { connection, created } = await service.upsert(accountId, { provider: id, ...fields });
      return { ...connection, created };
    },
  },
  {
    name: 'delete-connection',
    args: '<username> <provider>',
    summary: "delete a user's connection to a provider",
    run: async (context, [username, provider]) => {
      const name = required(username, 'username');
      const id = required(provider, 'provider');
      if (context.server) await context.server().call('DELETE', `/accounts/${seg(name)}/providers/${seg(id)}`);
      else {
        const { accountId, service } = await connectionsOf(context, name);
        await service.remove(accountId, id);
      }
      return { deleted: id };
    },
  },
];
