// API keys: create (the key is printed once), list (never the keys), revoke.
import type { ApiKeyView } from '../../services/api-keys.js';
import type { LadderAccess } from '../../services/ladder-access.js';
import { notFound } from '../../errors.js';
import { required, seg, text, UsageError, UUID_RE, type Command } from '../command.js';

const accounts = () => import('../../services/accounts.js');
const keys = () => import('../../services/api-keys.js');
const audit = () => import('../../services/audit.js');
const MODES = ['unrestricted', 'whitelist', 'blacklist'];
const SCOPES = ['use', 'manage'];

export const keyCommands: Command[] = [
  {
    name: 'create-key',
    args: '<username> [--name N] [--scope use|manage] [--expires ISO-DATE-TIME] [--mode unrestricted|whitelist|blacklist] [--ladder author/slug ...]',
    summary: 'create an API key (the key is printed once)',
    details:
      '--scope manage also lets the key manage the account (its keys, webhooks); the default is use. ' +
      '--expires (e.g. 2026-01-31T00:00:00Z) makes the key stop working then. ' +
      '--ladder (repeatable, "author/slug" or "author/*") lists the ladders a whitelist allows or a blacklist refuses.',
    options: { name: { type: 'string' }, scope: { type: 'string' }, expires: { type: 'string' }, mode: { type: 'string' }, ladder: { type: 'string', multiple: true } },
    run: async (context, [username], flags) => {
      const name = required(username, 'username');
      const mode = text(flags.mode) ?? 'unrestricted';
      if (!MODES.includes(mode)) throw new UsageError('--mode must be unrestricted, whitelist or blacklist');
      const scope = text(flags.scope) ?? 'use';
      if (!SCOPES.includes(scope)) throw new UsageError('--scope must be use or manage');
      const access = { mode: mode as LadderAccess['mode'], ladders: (flags.ladder as string[] | undefined) ?? [] };
      const keyName = text(flags.name) ?? null;
      const expires = text(flags.expires) ?? null;
      if (context.server) {
        const body = { ...(keyName !== null ? { name: keyName } : {}), scope, access, ...(expires !== null ? { expires_at: expires } : {}) };
        return context.server().call('POST', `/accounts/${seg(name)}/api-keys`, body);
      }
      const { db } = await context.database();
      const account = await (await accounts()).findAccount(db, name);
      const { revoked_at: _never, ...created } = await (await keys()).createApiKey(
        db,
        account,
        { name: keyName, scope: scope as 'use' | 'manage', access, expires_at: expires },
        (await audit()).CLI_ACTOR,
      );
      return created;
    },
  },
  {
    name: 'list-keys',
    args: '<username>',
    summary: "list an account's API keys (never the keys themselves)",
    run: async (context, [username]) => {
      const name = required(username, 'username');
      const columns = ['id', 'key_prefix', 'name', 'scope', 'access', 'expires_at', 'created_at', 'revoked_at'];
      if (context.server) return { data: (await context.server().call<{ data: ApiKeyView[] }>('GET', `/accounts/${seg(name)}/api-keys`)).data, columns };
      const { db } = await context.database();
      const account = await (await accounts()).findAccount(db, name);
      return { data: await (await keys()).listApiKeys(db, account.id), columns };
    },
  },
  {
    name: 'revoke-key',
    args: '<key id>',
    summary: 'revoke an API key (every running server stops accepting it at once)',
    run: async (context, [id]) => {
      const keyId = required(id, 'key id');
      if (!UUID_RE.test(keyId)) throw notFound('api_key_not_found', `No API key has id "${keyId}".`);
      if (context.server) await context.server().call('DELETE', `/api-keys/${seg(keyId)}`);
      else await (await keys()).revokeApiKey((await context.database()).db, keyId, (await audit()).CLI_ACTOR);
      return { ok: true };
    },
  },
];
