// `ladder-admin limits`: show or change the limits of an account and its API keys.
// The command's entry is in limits.ts beside it; this module does the work.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { apiKeys } from '../../db/schema.js';
import { invalidRequest, notFound } from '../../errors.js';
import { createLimitsStore, type Limits } from '../../quotas/limits-store.js';
import { findAccount } from '../../services/accounts.js';
import { listApiKeys, type ApiKeyView } from '../../services/api-keys.js';
import { CLI_ACTOR, recordAudit } from '../../services/audit.js';
import type { AdminApi } from '../remote.js';

export const LIMIT_FLAGS = {
  key: { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  'usd-day': { type: 'string' },
  'usd-month': { type: 'string' },
} as const;

type LimitFlags = Partial<Record<keyof typeof LIMIT_FLAGS, string>>;

const FIELDS: Array<[Exclude<keyof LimitFlags, 'key'>, keyof Limits, boolean]> = [
  ['rpm', 'requests_per_minute', true],
  ['tpm', 'tokens_per_minute', true],
  ['usd-day', 'usd_per_day', false],
  ['usd-month', 'usd_per_month', false],
];

function parseLimit(flag: string, value: string, integer: boolean): number | null {
  if (value === 'none') return null;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < (integer ? 1 : 0) || (integer && !Number.isInteger(n))) {
    throw invalidRequest('invalid_value', `--${flag} must be ${integer ? 'a whole number of at least 1' : 'a number of USD, 0 or more'}, or "none".`, flag);
  }
  return n;
}

type Change = [field: keyof Limits, value: number | null];

/** The flags' changes, checked before anything is read or written. */
export function limitChanges(flags: LimitFlags): Change[] {
  return FIELDS.filter(([flag]) => flags[flag] !== undefined).map(([flag, field, integer]) => [field, parseLimit(flag, flags[flag]!, integer)]);
}

const apply = (limits: Limits, changes: Change[]): Limits => Object.assign({ ...limits }, Object.fromEntries(changes));

export async function limitsCommand(db: Db, username: string, flags: LimitFlags) {
  const changes = limitChanges(flags);
  const store = createLimitsStore(db, 0);
  const account = await findAccount(db, username);
  if (changes.length > 0) {
    let scope: 'account' | 'api_key' = 'account';
    let id = account.id;
    if (flags.key) {
      const [key] = await db.select({ id: apiKeys.id }).from(apiKeys).where(and(eq(apiKeys.id, flags.key), eq(apiKeys.accountId, account.id)));
      if (!key) throw keyNotFound(username, flags.key);
      scope = 'api_key';
      id = key.id;
    }
    // Only the limits named by a flag change; the others stay as they are.
    const limits = apply(await store.get(scope, id), changes);
    await store.set(scope, id, limits);
    await recordAudit(db, CLI_ACTOR, { action: scope === 'account' ? 'account.limits_set' : 'api_key.limits_set', account, targetId: id, details: { limits } });
  }
  const keys = await listApiKeys(db, account.id);
  const keyLimits = await store.many('api_key', keys.map((k) => k.id));
  return {
    data: [
      { subject: `account ${username}`, ...(await store.get('account', account.id)) },
      ...keys.map((k) => ({ subject: `key ${k.id} (${k.key_prefix})`, ...keyLimits.get(k.id)! })),
    ],
  };
}

/** The same through a running server's admin API. */
export async function remoteLimitsCommand(api: AdminApi, username: string, flags: LimitFlags) {
  const changes = limitChanges(flags);
  const account = `/accounts/${encodeURIComponent(username)}`;
  const listKeys = () => api.call<{ data: Array<ApiKeyView & { limits: Limits }> }>('GET', `${account}/api-keys`);
  if (changes.length > 0) {
    let route = `${account}/limits`;
    if (flags.key) {
      if (!(await listKeys()).data.some((k) => k.id === flags.key)) throw keyNotFound(username, flags.key);
      route = `/api-keys/${encodeURIComponent(flags.key)}/limits`;
    }
    await api.call('PUT', route, apply(await api.call<Limits>('GET', route), changes));
  }
  const [limits, keys] = await Promise.all([api.call<Limits>('GET', `${account}/limits`), listKeys()]);
  return {
    data: [
      { subject: `account ${username}`, ...limits },
      ...keys.data.map((k) => ({ subject: `key ${k.id} (${k.key_prefix})`, ...k.limits })),
    ],
  };
}

const keyNotFound = (username: string, id: string) => notFound('api_key_not_found', `Account "${username}" has no API key with id "${id}".`);
