// Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
// `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64 bytes after `whsec_`,
// sent as `v1,<base64>`; several signatures (during a secret rotation) are space-separated.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` and 32 random bytes in base64. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The `v1,` signature of one message under one secret. */
export function sign(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of a signed message; every secret given signs it (the current one first). */
export function signedHeaders(secrets: string[], messageId: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => sign(s, messageId, timestampSeconds, body)).join(' '),
  };
}
