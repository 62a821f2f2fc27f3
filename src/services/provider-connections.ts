// The caller's provider connections: one per provider per account, keys sealed at rest.
// Reads for the router go through a per-account cache of decrypted connections, so a
// warm chat call costs no database round trip; every write on this node evicts the entry.
import { and, asc, eq, getTableColumns, max, sql } from 'drizzle-orm';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import { providerConnections } from '../db/schema.js';
import { SecretUnavailableError, type SecretBox } from '../crypto/secret-box.js';
import { ApiError, invalidRequest, notFound } from '../errors.js';
import { catalogEntry } from '../providers/catalog.js';
import { assertEndpointAllowed } from '../providers/ssrf.js';
import type { ProviderConnection } from '../providers/types.js';

export interface ConnectionView {
  provider: string;
  label: string;
  priority: number;
  key_prefix: string;
  endpoint: string | null;
  updated_at: string;
}

export interface ConnectionInput {
  provider: string;
  api_key: string;
  priority?: number;
  label?: string;
  endpoint?: string;
}

export type ConnectionPatch = Partial<Omit<ConnectionInput, 'provider'>>;

type Row = typeof providerConnections.$inferSelect;

/** Auto-assigned priorities leave room to slot a connection in between later. */
const PRIORITY_STEP = 10;
const MAX_PRIORITY = 1000;
const MAX_CACHED_ACCOUNTS = 50_000;
/** First key of the advisory lock that serialises priority assignment per account. */
const PRIORITY_LOCK_SPACE = 0x70726f76;

export interface ConnectionServiceOptions {
  allowPrivateEndpoints: boolean;
  /** How long another node may keep serving a changed connection from its cache. */
  cacheTtlMs: number;
}

/**
 * The options both doors use, the API and the CLI: one endpoint rule from the same settings, so
 * neither saves an endpoint the other would refuse. `cacheTtlMs` 0 suits a one-shot process.
 */
export function connectionServiceOptions(config: Pick<Config, 'providers' | 'keyCacheTtlMs'>, cacheTtlMs = config.keyCacheTtlMs): ConnectionServiceOptions {
  return { allowPrivateEndpoints: config.providers.allowPrivateEndpoints, cacheTtlMs };
}

export function createConnectionService(db: Db, box: SecretBox, options: ConnectionServiceOptions) {
  const cache = new Map<string, { connections: ProviderConnection[]; expiresAt: number }>();
  const sealContext = (accountId: string, provider: string) => `provider-key:${accountId}:${provider}`;

  async function checkEndpoint(provider: string, endpoint: string | undefined, required: boolean): Promise<void> {
    const entry = catalogEntry(provider)!;
    if (endpoint === undefined) {
      if (required && entry.supportsEndpoint) throw invalidRequest('missing_required_field', `Missing required field: endpoint (provider "${provider}" needs one).`, 'endpoint');
      return;
    }
    if (!entry.supportsEndpoint) throw invalidRequest('endpoint_not_supported', `Provider "${provider}" does not take a custom endpoint.`, 'endpoint');
    await assertEndpointAllowed(endpoint, options.allowPrivateEndpoints);
  }

  function sealKey(accountId: string, provider: string, apiKey: string) {
    if (apiKey.trim() !== apiKey || apiKey.length === 0) {
      throw invalidRequest('invalid_api_key', 'api_key must be non-empty and have no leading or trailing whitespace.', 'api_key');
    }
    return { apiKeyCiphertext: box.seal(apiKey, sealContext(accountId, provider)), keyPrefix: maskedPrefix(apiKey) };
  }

  /** Reads within `tx`, which must hold the account's priority lock (see upsert). */
  async function nextPriority(tx: Pick<Db, 'select'>, accountId: string): Promise<number> {
    const [row] = await tx.select({ highest: max(providerConnections.priority) }).from(providerConnections).where(eq(providerConnections.accountId, accountId));
    return row?.highest == null ? 0 : Math.min(MAX_PRIORITY, row.highest + PRIORITY_STEP);
  }

  return {
    async list(accountId: string): Promise<ConnectionView[]> {
      const rows = await db.select().from(providerConnections).where(eq(providerConnections.accountId, accountId)).orderBy(asc(providerConnections.priority), asc(providerConnections.createdAt));
      return rows.map(view);
    },

    /** Creates the connection, or updates the existing one for that provider. */
    async upsert(accountId: string, input: ConnectionInput): Promise<{ connection: ConnectionView; created: boolean }> {
      if (!catalogEntry(input.provider)) {
        throw invalidRequest('unknown_provider', `Unknown provider "${input.provider}". See GET /v1/providers/catalog for the supported ids.`, 'provider');
      }
      const [existing] = await db.select().from(providerConnections).where(and(eq(providerConnections.accountId, accountId), eq(providerConnections.provider, input.provider)));
      await checkEndpoint(input.provider, input.endpoint, !existing?.endpoint);
      const sealed = sealKey(accountId, input.provider, input.api_key);
      const values = {
        ...sealed,
        ...(input.label !== undefined ? { label: input.label } : {}),
        ...(input.endpoint !== undefined ? { endpoint: input.endpoint } : {}),
        ...(input.priority !== undefined ? { priority: input.priority } : {}),
        updatedAt: new Date(),
      };
      // One statement decides "created or updated", so of concurrent adds exactly one is told
      // created (xmax is 0 only on a freshly inserted row). An auto-assigned priority reads the
      // account's highest and writes above it: a transaction-scoped advisory lock per account
      // makes concurrent creates take turns there, so they follow the rule on every database.
      const row = await db.transaction(async (tx) => {
        if (input.priority === undefined) await tx.execute(sql`select pg_advisory_xact_lock(${PRIORITY_LOCK_SPACE}, hashtext(${accountId}))`);
        const [upserted] = await tx
          .insert(providerConnections)
          .values({ accountId, provider: input.provider, priority: input.priority ?? (await nextPriority(tx, accountId)), ...values })
          .onConflictDoUpdate({ target: [providerConnections.accountId, providerConnections.provider], set: values })
          .returning({ ...getTableColumns(providerConnections), created: sql<boolean>`(xmax = 0)` });
        return upserted!;
      });
      cache.delete(accountId);
      const { created, ...stored } = row;
      return { connection: view(stored), created };
    },

    async update(accountId: string, provider: string, patch: ConnectionPatch): Promise<ConnectionView> {
      const [existing] = await db.select().from(providerConnections).where(and(eq(providerConnections.accountId, accountId), eq(providerConnections.provider, provider)));
      if (!existing) throw connectionNotFound(provider);
      await checkEndpoint(provider, patch.endpoint, false);
      const values = {
        ...(patch.api_key !== undefined ? sealKey(accountId, provider, patch.api_key) : {}),
        ...(patch.label !== undefined ? { label: patch.label } : {}),
        ...(patch.endpoint !== undefined ? { endpoint: patch.endpoint } : {}),
        ...(patch.priority !== undefined ? { priority: patch.priority } : {}),
      };
      if (Object.keys(values).length === 0) return view(existing);
      const [row] = await db.update(providerConnections).set({ ...values, updatedAt: new Date() }).where(eq(providerConnections.id, existing.id)).returning();
      cache.delete(accountId);
      return view(row!);
    },

    async remove(accountId: string, provider: string): Promise<void> {
      const deleted = await db.delete(providerConnections).where(and(eq(providerConnections.accountId, accountId), eq(providerConnections.provider, provider))).returning({ id: providerConnections.id });
      cache.delete(accountId);
      if (deleted.length === 0) throw connectionNotFound(provider);
    },

    /** Decrypted connections for the router, cached. */
    async forRouting(accountId: string): Promise<ProviderConnection[]> {
      const cached = cache.get(accountId);
      if (cached && cached.expiresAt > Date.now()) return cached.connections;
      const rows = await db.select().from(providerConnections).where(eq(providerConnections.accountId, accountId));
      const connections = rows.map((row) => ({
        id: row.id,
        provider: row.provider,
        priority: row.priority,
        apiKey: openKey(row),
        endpoint: row.endpoint,
        createdAt: row.createdAt,
      }));
      if (options.cacheTtlMs > 0) {
        // Bounded like the API-key cache: emptied when full, refilled by the accounts in use.
        if (cache.size >= MAX_CACHED_ACCOUNTS) cache.clear();
        cache.set(accountId, { connections, expiresAt: Date.now() + options.cacheTtlMs });
      }
      return connections;
    },

    /**
     * Reseals every stored key made under an older encryption key; returns how many changed.
     * A key that cannot be decrypted does not stop the others from being resealed; it is
     * reported at the end with a provider_key_unreadable error naming the connections.
     */
    async reencryptAll(): Promise<{ reencrypted: number; total: number }> {
      const rows = await db.select().from(providerConnections);
      let reencrypted = 0;
      const unreadable: Row[] = [];
      for (const row of rows) {
        if (!box.isStale(row.apiKeyCiphertext)) continue;
        let plaintext: string;
        try {
          plaintext = openKey(row);
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          unreadable.push(row);
          continue;
        }
        const sealed = box.seal(plaintext, sealContext(row.accountId, row.provider));
        // Compare-and-set: a key replaced meanwhile by its owner is not overwritten with the old one.
        const updated = await db
          .update(providerConnections)
          .set({ apiKeyCiphertext: sealed })
          .where(and(eq(providerConnections.id, row.id), eq(providerConnections.apiKeyCiphertext, row.apiKeyCiphertext)))
          .returning({ id: providerConnections.id });
        reencrypted += updated.length;
      }
      cache.clear();
      if (unreadable.length > 0) {
        const listed = unreadable.map((r) => `${r.id} (${r.provider})`).join(', ');
        throw new ApiError(
          500,
          'api_error',
          'provider_key_unreadable',
          `Resealed ${reencrypted} of ${rows.length} stored provider keys; ${unreadable.length} could not be decrypted with any configured encryption key and were left unchanged: ${listed}. Configure the key that sealed them in ENCRYPTION_KEY_PREVIOUS and run this again, or have their owners save them anew.`,
        );
      }
      return { reencrypted, total: rows.length };
    },
  };

  function openKey(row: Row): string {
    try {
      return box.open(row.apiKeyCiphertext, sealContext(row.accountId, row.provider));
    } catch (error) {
      if (!(error instanceof SecretUnavailableError)) throw error;
      // Loud on purpose: skipping the connection would silently change routing.
      throw new ApiError(
        500,
        'api_error',
        'provider_key_unreadable',
        `The stored API key for provider "${row.provider}" cannot be decrypted (${error.message}). Save the key again with POST /v1/providers, or ask the operator to configure the missing encryption key.`,
      );
    }
  }
}

export type ConnectionService = ReturnType<typeof createConnectionService>;

function connectionNotFound(provider: string) {
  return notFound('provider_connection_not_found', `You have no connection for provider "${provider}".`);
}

/** A short leading part of the key: at most 8 characters, and never more than a quarter of it. */
export function maskedPrefix(apiKey: string): string {
  return apiKey.slice(0, Math.min(8, Math.floor(apiKey.length / 4)));
}

function view(row: Row): ConnectionView {
  return {
    provider: row.provider,
    label: row.label,
    priority: row.priority,
    key_prefix: row.keyPrefix,
    endpoint: row.endpoint,
    updated_at: row.updatedAt.toISOString(),
  };
}

