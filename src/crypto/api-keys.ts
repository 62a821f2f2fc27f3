// API keys: `ldr_live_<lookup id>_<secret>`. The lookup id finds the row (and is shown as
// the key's prefix); the secret is only ever compared as a SHA-256 digest, in constant time.
// A fast hash is right here: the key carries 256 bits of entropy, so it cannot be guessed.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

const SCHEME = 'ldr_live_';
const KEY_PATTERN = /^ldr_live_([A-Za-z0-9]{8})_([A-Za-z0-9_-]{43})$/;
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export interface NewApiKey {
  key: string;
  prefix: string;
  hash: string;
}

export function generateApiKey(): NewApiKey {
  const lookup = Array.from(randomBytes(8), (b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join('');
  const key = `${SCHEME}${lookup}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix: `${SCHEME}${lookup}`, hash: hashApiKey(key) };
}

/** The prefix to look the key up by, or null when the string is not shaped like one of our keys. */
export function apiKeyPrefix(candidate: string): string | null {
  const match = KEY_PATTERN.exec(candidate);
  return match ? `${SCHEME}${match[1]}` : null;
}

export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/**
 * Whether `candidate` hashes to the stored digest (hex, or its bytes: the authenticator decodes
 * it once per cached key). One-shot hashing: no Hash object, no hex round trip for the candidate.
 */
export function apiKeyMatches(candidate: string, storedHash: string | Buffer): boolean {
  const actual = hash('sha256', candidate, 'buffer');
  const expected = typeof storedHash === 'string' ? Buffer.from(storedHash, 'hex') : storedHash;
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
