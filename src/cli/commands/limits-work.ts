// `ladder-admin limits`: show or change the limits of an account and its API keys.
// The command's entry is in limits.ts beside it; this module does the work.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { apiKeys } from '../../db/schema.js';
import { invalidRequest, notFound } from '../../errors.js';
import { createLimitsStore, type Limits } from '../../quotas/limits-store.js';
import { findAccount } from '../../services/accounts.js';
import { listApiKeys } from '../../services/api-keys.js';
import { CLI_ACTOR, recordAudit } from '../../services/audit.js';

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

export async function limitsCommand(db: Db, username: string, flags: LimitFlags) {
  const store = createLimitsStore(db, 0);
  const account = await findAccount(db, username);
  const changes = FIELDS.filter(([flag]) => flags[flag] !== undefined);
  if (changes.length > 0) {
    let scope: 'account' | 'api_key' = 'account';
    let id = account.id;
    if (flags.key) {
      const [key] = await db.select({ id: apiKeys.id }).from(apiKeys).where(and(eq(apiKeys.id, flags.key), eq(apiKeys.accountId, account.id)));
      if (!key) throw notFound('api_key_not_found', `Account "${username}" has no API key with id "${flags.key}".`);
      scope = 'api_key';
      id = key.id;
    }
    // Only the limits named by a flag change; the others stay as they are.
    const limits = { ...(await store.get(scope, id)) };
    for (const [flag, field, integer] of changes) limits[field] = parseLimit(flag, flags[flag]!, integer);
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
