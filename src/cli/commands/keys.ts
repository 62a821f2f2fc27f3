// API keys: create (the key is printed once), list (never the keys), revoke.
import type { LadderAccess } from '../../services/ladder-access.js';
import { notFound } from '../../errors.js';
import { required, text, UsageError, UUID_RE, type Command } from '../command.js';

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
      const mode = text(flags.mode) ?? 'unrestricted';
      if (!MODES.includes(mode)) throw new UsageError('--mode must be unrestricted, whitelist or blacklist');
      const scope = text(flags.scope) ?? 'use';
      if (!SCOPES.includes(scope)) throw new UsageError('--scope must be use or manage');
      const access = { mode: mode as LadderAccess['mode'], ladders: (flags.ladder as string[] | undefined) ?? [] };
      const { db } = await context.database();
      const account = await (await accounts()).findAccount(db, required(username, 'username'));
      return (await keys()).createApiKey(
        db,
        account,
        { name: text(flags.name) ?? null, scope: scope as 'use' | 'manage', access, expires_at: text(flags.expires) ?? null },
        (await audit()).CLI_ACTOR,
      );
    },
  },
  {
    name: 'list-keys',
    args: '<username>',
    summary: "list an account's API keys (never the keys themselves)",
    run: async (context, [username]) => {
      const { db } = await context.database();
      const account = await (await accounts()).findAccount(db, required(username, 'username'));
      return { data: await (await keys()).listApiKeys(db, account.id), columns: ['id', 'key_prefix', 'name', 'scope', 'access', 'expires_at', 'created_at', 'revoked_at'] };
    },
  },
  {
    name: 'revoke-key',
    args: '<key id>',
    summary: 'revoke an API key (every running server stops accepting it at once)',
    run: async (context, [id]) => {
      const keyId = required(id, 'key id');
      if (!UUID_RE.test(keyId)) throw notFound('api_key_not_found', `No API key has id "${keyId}".`);
      await (await keys()).revokeApiKey((await context.database()).db, keyId, (await audit()).CLI_ACTOR);
      return { ok: true };
    },
  },
];
