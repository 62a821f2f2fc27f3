// The Idempotency-Key of a background start, and the hash that tells a retry of the same
// request from another request that reuses its key.
import { createHash } from 'node:crypto';
import { invalidIdempotencyKey } from '../../errors.js';

const KEY_RE = /^[\x20-\x7e]{1,255}$/;

/** The header's key, null without one; 400 invalid_idempotency_key for a malformed one. */
export function idempotencyKeyOf(header: string | undefined): string | null {
  if (header === undefined) return null;
  if (!KEY_RE.test(header)) throw invalidIdempotencyKey();
  return header;
}

/** Members in code-point order at every level, so the same body always hashes the same. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}

/** SHA-256 (hex) of the body's canonical JSON. */
export function requestHash(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(canonical(body))).digest('hex');
}
