// Authenticated encryption (AES-256-GCM) for secrets at rest, such as provider keys.
// A sealed value names the key that sealed it, so keys can be rotated: old keys stay
// configured for reading (ENCRYPTION_KEY_PREVIOUS) until `admin reencrypt` has resealed
// every row under the current key.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const FORMAT = 'v1';
const IV_BYTES = 12;

export class SecretUnavailableError extends Error {
  override readonly name = 'SecretUnavailableError';
}

export interface SecretBox {
  /** Id of the key new secrets are sealed with. */
  readonly currentKeyId: string;
  /** `context` binds the ciphertext to its owner (e.g. account and provider); pass the same to open. */
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
  /** Whether a sealed value was made with an older key and should be resealed. */
  isStale(sealed: string): boolean;
}

/** A short public fingerprint of a key: safe to store and log, reveals nothing of it. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

export function createSecretBox(current: Buffer, previous: Buffer[] = []): SecretBox {
  const keys = new Map<string, Buffer>();
  for (const key of [current, ...previous]) keys.set(keyId(key), key);
  const currentKeyId = keyId(current);

  return {
    currentKeyId,
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [FORMAT, currentKeyId, iv, cipher.getAuthTag(), body]
        .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
        .join('.');
    },
    open(sealed, context) {
      const parts = sealed.split('.');
      if (parts.length !== 5 || parts[0] !== FORMAT) throw new SecretUnavailableError('stored secret is not in a known format');
      const [, id, iv, tag, body] = parts as [string, string, string, string, string];
      const key = keys.get(id);
      if (!key) throw new SecretUnavailableError(`stored secret was sealed with encryption key ${id}, which is not configured`);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(context));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretUnavailableError(`stored secret failed authentication under encryption key ${id}`);
      }
    },
    isStale: (sealed) => sealed.split('.')[1] !== currentKeyId,
  };
}

/** Decodes an ENCRYPTION_KEY value: base64 of exactly 32 bytes. */
export function decodeEncryptionKey(value: string, name: string): Buffer {
  const key = Buffer.from(value.trim(), 'base64');
  if (key.length !== 32 || key.toString('base64') !== value.trim()) {
    throw new Error(`${name} must be the base64 encoding of exactly 32 bytes (generate one with: openssl rand -base64 32)`);
  }
  return key;
}
