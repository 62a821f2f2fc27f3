// Resolves `Authorization: Bearer <key>` to the calling account. Lookups are cached so the
// hot path costs no database round trip; revoking on this node evicts at once, and other
// nodes drop a revoked key within `ttlMs` (KEY_CACHE_TTL_MS).
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { accounts, apiKeys } from '../db/schema.js';
import { apiKeyMatches, apiKeyPrefix } from '../crypto/api-keys.js';
import { unauthenticated } from '../errors.js';
import type { LadderAccess } from './ladder-access.js';

export interface Principal {
  accountId: string;
  username: string;
  apiKeyId: string;
  access: LadderAccess;
}

interface StoredKey {
  principal: Principal;
  hash: string;
  revoked: boolean;
}

interface CacheEntry {
  key: StoredKey | null;
  expiresAt: number;
}

// Bounds memory when someone sprays random keys at us: the cache is simply emptied when full.
const MAX_CACHE_ENTRIES = 50_000;

export interface Authenticator {
  authenticate(authorization: string | undefined): Promise<Principal>;
  /** Forget a key at once (after revocation on this node). */
  forget(keyPrefix: string): void;
}

export function createAuthenticator(db: Db, ttlMs: number): Authenticator {
  const cache = new Map<string, CacheEntry>();

  async function lookup(prefix: string): Promise<StoredKey | null> {
    const cached = cache.get(prefix);
    if (cached && cached.expiresAt > Date.now()) return cached.key;
    const [row] = await db
      .select({
        id: apiKeys.id,
        hash: apiKeys.keyHash,
        revokedAt: apiKeys.revokedAt,
        accessMode: apiKeys.accessMode,
        accessLadders: apiKeys.accessLadders,
        accountId: accounts.id,
        username: accounts.username,
      })
      .from(apiKeys)
      .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
      .where(eq(apiKeys.keyPrefix, prefix));
    const key: StoredKey | null = row
      ? {
          hash: row.hash,
          revoked: row.revokedAt !== null,
          principal: {
            accountId: row.accountId,
            username: row.username,
            apiKeyId: row.id,
            access: { mode: row.accessMode, ladders: row.accessLadders },
          },
        }
      : null;
    if (ttlMs > 0) {
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
      const stored = prefix ? await lookup(prefix) : null;
      if (!stored || !apiKeyMatches(candidate, stored.hash)) {
        throw unauthenticated('Invalid API key.', 'invalid_api_key');
      }
      if (stored.revoked) throw unauthenticated('This API key has been revoked.', 'revoked_api_key');
      return stored.principal;
    },
    forget: (keyPrefix) => void cache.delete(keyPrefix),
  };
}
