// The models a caller's connections can serve, for GET /v1/models: each vendor's own list
// (fetched through the same guarded transport as chat calls, cached briefly), filtered by the
// catalog, under both the plain name (when it routes) and the explicit `provider/model` name.
import type { Dispatcher } from 'undici';
import { adapters } from './adapters/index.js';
import { ShapeError, type VendorModel } from './adapters/types.js';
import type { Target } from './call-vendor.js';
import { candidatesFor, catalogEntry, compareConnections, servesModel } from './catalog.js';
import type { ProviderConnection } from './types.js';
import { VendorError } from './vendor-errors.js';

export interface ModelEntry {
  id: string;
  object: 'model';
  /** Unix seconds; 0 when the vendor does not say. */
  created: number;
  /** The provider id that serves it (for a plain name: the first connection in routing order). */
  owned_by: string;
}

export interface ModelListOptions {
  /** Per list request. */
  timeoutMs: number;
  /** How long a connection's list is reused. */
  ttlMs: number;
}

const LIST_BODY_LIMIT = 4 * 1024 * 1024;
const CACHE_LIMIT = 1000;

/** A vendor list fetcher with a short per-connection cache; null when the vendor offers no list. */
export function createModelLists(options: ModelListOptions) {
  const cache = new Map<string, { expiresAt: number; models: Promise<VendorModel[] | null> }>();

  async function fetchList(connection: ProviderConnection, target: Target | VendorError): Promise<VendorModel[] | null> {
    const adapter = adapters[connection.provider];
    if (!adapter?.models) return null;
    if (target instanceof VendorError) throw target;
    const response = await target.dispatcher.request({
      origin: target.origin,
      path: adapter.models.path(target.basePath),
      method: 'GET',
      headers: adapter.headers(connection.apiKey),
      signal: AbortSignal.timeout(options.timeoutMs),
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      await response.body.dump();
      throw new ShapeError(`HTTP ${response.statusCode}`);
    }
    return adapter.models.parse(JSON.parse(await readLimited(response.body)));
  }

  return {
    /** The vendor's list for this connection; rejects when the vendor could not be asked. */
    get(connection: ProviderConnection, target: Target | VendorError): Promise<VendorModel[] | null> {
      const key = `${connection.id}\n${connection.apiKey}\n${connection.endpoint ?? ''}`;
      const hit = cache.get(key);
      if (hit && hit.expiresAt > Date.now()) return hit.models;
      const models = fetchList(connection, target);
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(key, { expiresAt: Date.now() + options.ttlMs, models });
      // A failure is not kept: the next request asks again.
      models.catch(() => cache.delete(key));
      return models;
    },
  };
}

async function readLimited(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > LIST_BODY_LIMIT) {
      body.destroy();
      throw new ShapeError('model list too large');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/**
 * Every servable model id: for each connection's models (its vendor list, else the catalog's own
 * fixed list), `provider/model`, and the plain name when plain routing reaches a connection.
 * `lists` holds one entry per connection, null where no list is known.
 */
export function servableModels(connections: ProviderConnection[], lists: Array<VendorModel[] | null>): ModelEntry[] {
  const byId = new Map<string, ModelEntry>();
  const order = connections.map((c, i) => [c, lists[i] ?? null] as const).sort((a, b) => compareConnections(a[0], b[0]));
  for (const [connection, list] of order) {
    const entry = catalogEntry(connection.provider);
    if (!entry) continue;
    const models = list ?? (entry.models.kind === 'list' ? entry.models.models.map((id) => ({ id, created: 0 })) : []);
    for (const model of models) {
      if (!servesModel(entry, model.id)) continue;
      const explicit = `${connection.provider}/${model.id}`;
      if (!byId.has(explicit)) byId.set(explicit, { id: explicit, object: 'model', created: model.created, owned_by: connection.provider });
      if (byId.has(model.id)) continue;
      const first = candidatesFor(model.id, connections)[0];
      if (first) byId.set(model.id, { id: model.id, object: 'model', created: model.created, owned_by: first.connection.provider });
    }
  }
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
