// API keys: create (the key is printed once), list (never the keys), revoke.
import type { ApiKeyView } from '../../services/accounts.js';
import type { LadderAccess } from '../../services/ladder-access.js';
import { notFound } from '../../errors.js';
import { required, seg, text, UsageError, UUID_RE, type Command } from '../command.js';

const accounts = () => import('../../services/accounts.js');
const MODES = ['unrestricted', 'whitelist', 'blacklist'];

export const keyCommands: Command[] = [
  {
    name: 'create-key',
    args: '<username> [--name N] [--mode unrestricted|whitelist|blacklist] [--ladder author/slug ...]',
    summary: 'create an API key (the key is printed once)',
    details: '--ladder (repeatable, "author/slug" or "author/*") lists the ladders a whitelist allows or a blacklist refuses.',
    options: { name: { type: 'string' }, mode: { type: 'string' }, ladder: { type: 'string', multiple: true } },
    run: async (context, [username], flags) => {
      const name = required(username, 'username');
      const mode = text(flags.mode) ?? 'unrestricted';
      if (!MODES.includes(mode)) throw new UsageError('--mode must be unrestricted, whitelist or blacklist');
      const access = { mode: mode as LadderAccess['mode'], ladders: (flags.ladder as string[] | undefined) ?? [] };
      const keyName = text(flags.name) ?? null;
      if (context.server) return context.server().call('POST', `/accounts/${seg(name)}/api-keys`, { ...(keyName !== null ? { name: keyName } : {}), access });
      const { revoked_at: _never, ...created } = await (await accounts()).createApiKey((await context.database()).db, name, { name: keyName, access });
      return created;
    },
  },
  {
    name: 'list-keys',
    args: '<username>',
    summary: "list an account's API keys (never the keys themselves)",
    run: async (context, [username]) => {
      const name = required(username, 'username');
      const data = context.server
        ? (await context.server().call<{ data: ApiKeyView[] }>('GET', `/accounts/${seg(name)}/api-keys`)).data
        : await (await accounts()).listApiKeys((await context.database()).db, name);
      return { data, columns: ['id', 'key_prefix', 'name', 'access', 'created_at', 'revoked_at'] };
    },
  },
  {
    name: 'revoke-key',
    args: '<key id>',
    summary: 'revoke an API key (other running nodes stop accepting it within KEY_CACHE_TTL_MS)',
    run: async (context, [id]) => {
      const keyId = required(id, 'key id');
      if (!UUID_RE.test(keyId)) throw notFound('api_key_not_found', `No API key has id "${keyId}".`);
      if (context.server) await context.server().call('DELETE', `/api-keys/${seg(keyId)}`);
      else await (await accounts()).revokeApiKey((await context.database()).db, keyId);
      return { ok: true };
    },
  },
];
