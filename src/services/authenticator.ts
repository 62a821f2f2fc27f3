// Resolves `Authorization: Bearer <key>` to the calling account. Lookups are cached so the
// hot path costs no database round trip; a change to a key or its account evicts at once on
// every node through key notices (key-notices.ts), and within `ttlMs` (KEY_CACHE_TTL_MS) at
// worst, should a node miss one.
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { accounts, apiKeys, type ApiKeyScope } from '../db/schema.js';
import { apiKeyMatches, apiKeyPrefix } from '../crypto/api-keys.js';
import { unauthenticated } from '../errors.js';
import type { LadderAccess } from './ladder-access.js';

export interface Principal {
  accountId: string;
  username: string;
  apiKeyId: string;
  access: LadderAccess;
  /** `use` unless the key may also manage the account (docs/accounts.md). */
  scope: ApiKeyScope;
  /** When the key stops working; null: never. */
  expiresAt: Date | null;
}

interface StoredKey {
  principal: Principal;
  /** The key's SHA-256 digest, decoded once from the row's hex. */
  hash: Buffer;
  revoked: boolean;
  accountDisabled: boolean;
}

interface CacheEntry {
  key: StoredKey | null;
  expiresAt: number;
}

// Bounds memory when someone sprays random keys at us: the cache is simply emptied when full.
const MAX_CACHE_ENTRIES = 50_000;

export interface Authenticator {
  authenticate(authorization: string | undefined): Promise<Principal>;
  /** Forget a key at once (after it was revoked or changed). */
  forget(keyPrefix: string): void;
  /** Forget every key of an account at once (after it was disabled or enabled). */
  forgetAccount(accountId: string): void;
}

export function createAuthenticator(db: Db, ttlMs: number): Authenticator {
  const cache = new Map<string, CacheEntry>();
  // Bumped by every forget: a lookup that read the row before the change does not cache it after.
  let generation = 0;

  /** A cached key at once, without a promise to wait on (nearly every request); else read from the database. */
  function lookup(prefix: string): StoredKey | null | Promise<StoredKey | null> {
    const cached = cache.get(prefix);
    return cached && cached.expiresAt > Date.now() ? cached.key : load(prefix);
  }

  async function load(prefix: string): Promise<StoredKey | null> {
    const started = generation;
    const [row] = await db
      .select({
        id: apiKeys.id,
        hash: apiKeys.keyHash,
        revokedAt: apiKeys.revokedAt,
        accessMode: apiKeys.accessMode,
        accessLadders: apiKeys.accessLadders,
        scope: apiKeys.scope,
        keyExpiresAt: apiKeys.expiresAt,
        accountId: accounts.id,
        username: accounts.username,
        disabledAt: accounts.disabledAt,
      })
      .from(apiKeys)
      .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
      .where(eq(apiKeys.keyPrefix, prefix));
    const key: StoredKey | null = row
      ? {
          hash: Buffer.from(row.hash, 'hex'),
          revoked: row.revokedAt !== null,
          accountDisabled: row.disabledAt !== null,
          principal: {
            accountId: row.accountId,
            username: row.username,
            apiKeyId: row.id,
            access: { mode: row.accessMode, ladders: row.accessLadders },
            scope: row.scope,
            expiresAt: row.keyExpiresAt,
          },
        }
      : null;
    if (ttlMs > 0 && started === generation) {
      if (cache.size >= MAX_CACHE_ENTRIES) cache.clear();
      cache.set(prefix, { key, expiresAt: Date.now() + ttlMs });
    }
    return key;
  }

  return {
    async authenticate(authorization) {
      if (!authorization) {
        throw unauthenticated('Missing API key. Send it in the header `Authorization: Bearer <API key>`.', 'missing_api_key');
      }
      const match = /^Bearer +(\S+) *$/i.exec(authorization);
      if (!match) {
        throw unauthenticated('Malformed Authorization header. Expected `Authorization: Bearer <API key>`.', 'invalid_authorization_header');
      }
      const candidate = match[1]!;
      const prefix = apiKeyPrefix(candidate);
      const found = prefix ? lookup(prefix) : null;
      const stored = found instanceof Promise ? await found : found;
      if (!stored || !apiKeyMatches(candidate, stored.hash)) {
        throw unauthenticated('Invalid API key.', 'invalid_api_key');
      }
      if (stored.revoked) throw unauthenticated('This API key has been revoked.', 'revoked_api_key');
      if (stored.accountDisabled) throw unauthenticated('The account of this API key is disabled; ask the operator to enable it.', 'account_disabled');
      const { expiresAt } = stored.principal;
      if (expiresAt && expiresAt.getTime() <= Date.now()) {
        throw unauthenticated(`This API key expired at ${expiresAt.toISOString()}.`, 'expired_api_key');
      }
      return stored.principal;
    },
    forget: (keyPrefix) => {
      generation++;
      cache.delete(keyPrefix);
    },
    forgetAccount: (accountId) => {
      generation++;
      for (const [prefix, entry] of cache) if (entry.key?.principal.accountId === accountId) cache.delete(prefix);
    },
  };
}
