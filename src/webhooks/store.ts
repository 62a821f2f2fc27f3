// An account's webhook endpoints: create, read, change, delete, and the signing secret, sealed
// at rest like provider keys (src/crypto/secret-box.ts) and shown only when made.
import { randomUUID } from 'node:crypto';
import { and, asc, count, eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { webhookEndpoints, type WebhookEventType } from '../db/schema.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { invalidRequest } from '../errors.js';
import { generateSecret } from './signing.js';
import { checkWebhookUrl } from './url.js';

export type EndpointRow = typeof webhookEndpoints.$inferSelect;

/** Endpoints one account may have. */
export const MAX_ENDPOINTS_PER_ACCOUNT = 20;
/** After a rotation, the old secret goes on signing for this long, beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;
export const DISABLED_BY_ACCOUNT = 'Disabled through the API (PATCH with "enabled": false).';

export interface NewEndpoint {
  url: string;
  events: WebhookEventType[];
  description: string;
}

export interface EndpointPatch {
  url?: string;
  events?: WebhookEventType[];
  description?: string;
  enabled?: boolean;
}

/** Binds a sealed secret to its endpoint: a ciphertext copied to another row does not open. */
const sealContext = (accountId: string, id: string) => `webhook-secret:${accountId}:${id}`;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createWebhookStore(db: Db, box: SecretBox, options: { allowPrivateEndpoints: boolean; clock: () => number }) {
  const owned = (accountId: string, id: string) => and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.accountId, accountId));

  return {
    async create(accountId: string, input: NewEndpoint): Promise<{ endpoint: EndpointRow; secret: string }> {
      const url = await checkWebhookUrl(input.url, options.allowPrivateEndpoints);
      const [row] = await db.select({ n: count() }).from(webhookEndpoints).where(eq(webhookEndpoints.accountId, accountId));
      if ((row?.n ?? 0) >= MAX_ENDPOINTS_PER_ACCOUNT) {
        throw invalidRequest('webhook_limit_reached', `An account can have at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints; delete one first.`);
      }
      const id = randomUUID();
      const secret = generateSecret();
      const [endpoint] = await db
        .insert(webhookEndpoints)
        .values({ id, accountId, url, events: input.events, description: input.description, secretCiphertext: box.seal(secret, sealContext(accountId, id)) })
        .returning();
      return { endpoint: endpoint!, secret };
    },

    list(accountId: string): Promise<EndpointRow[]> {
      return db.select().from(webhookEndpoints).where(eq(webhookEndpoints.accountId, accountId)).orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
    },

    /** The endpoint if `accountId` owns it; null for anyone else's, an unknown or a malformed id alike. */
    async get(accountId: string, id: string): Promise<EndpointRow | null> {
      if (!UUID_RE.test(id)) return null;
      const [row] = await db.select().from(webhookEndpoints).where(owned(accountId, id));
      return row ?? null;
    },

    /** Only the fields given change. Enabling clears the failure streak; disabling says who did it. */
    async update(accountId: string, id: string, patch: EndpointPatch): Promise<EndpointRow | null> {
      if (!UUID_RE.test(id)) return null;
      const url = patch.url === undefined ? undefined : await checkWebhookUrl(patch.url, options.allowPrivateEndpoints);
      const now = new Date(options.clock());
      const enabled =
        patch.enabled === undefined
          ? {}
          : patch.enabled
            ? { disabledAt: null, disabledReason: null, failingSince: null }
            : { disabledAt: now, disabledReason: DISABLED_BY_ACCOUNT };
      const [row] = await db
        .update(webhookEndpoints)
        .set({
          ...(url !== undefined ? { url } : {}),
          ...(patch.events !== undefined ? { events: patch.events } : {}),
          ...(patch.description !== undefined ? { description: patch.description } : {}),
          ...enabled,
          updatedAt: now,
        })
        .where(owned(accountId, id))
        .returning();
      return row ?? null;
    },

    /** Deletes the endpoint and its deliveries (queued ones are not sent); false when it was not the caller's. */
    async remove(accountId: string, id: string): Promise<boolean> {
      if (!UUID_RE.test(id)) return false;
      return (await db.delete(webhookEndpoints).where(owned(accountId, id)).returning({ id: webhookEndpoints.id })).length > 0;
    },

    /** A new secret; the old one signs beside it for PREVIOUS_SECRET_MS. */
    async rotateSecret(accountId: string, id: string): Promise<{ endpoint: EndpointRow; secret: string } | null> {
      const current = await this.get(accountId, id);
      if (!current) return null;
      const secret = generateSecret();
      const now = options.clock();
      const [endpoint] = await db
        .update(webhookEndpoints)
        .set({
          secretCiphertext: box.seal(secret, sealContext(accountId, id)),
          previousSecretCiphertext: current.secretCiphertext,
          previousSecretExpiresAt: new Date(now + PREVIOUS_SECRET_MS),
          updatedAt: new Date(now),
        })
        // Guarded by the secret read, so two rotations at once keep a secret that was shown.
        .where(and(owned(accountId, id), eq(webhookEndpoints.secretCiphertext, current.secretCiphertext)))
        .returning();
      if (!endpoint) throw invalidRequest('webhook_secret_rotated', 'The secret was rotated by another request at the same time; read the endpoint and rotate again if needed.');
      return { endpoint, secret };
    },
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;

/** The secrets that sign a message now: the current one, and the previous one while it is still honoured. Throws SecretUnavailableError. */
export function signingSecrets(box: SecretBox, endpoint: { id: string; accountId: string; secretCiphertext: string; previousSecretCiphertext: string | null; previousSecretExpiresAt: Date | null }, now: number): string[] {
  const context = sealContext(endpoint.accountId, endpoint.id);
  const secrets = [box.open(endpoint.secretCiphertext, context)];
  if (endpoint.previousSecretCiphertext && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt.getTime() > now) {
    secrets.push(box.open(endpoint.previousSecretCiphertext, context));
  }
  return secrets;
}
