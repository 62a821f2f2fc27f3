// Where each connection's requests go: catalog vendors at their base URL (parsed once), user
// endpoints (custom, azure-openai) SSRF-checked once per URL and cached.
import type { Dispatcher } from 'undici';
import { adapters } from './adapters/index.js';
import type { Target } from './call-vendor.js';
import { validateEndpointUrl } from './ssrf.js';
import type { Transport } from './transport.js';
import type { ProviderConnection } from './types.js';
import { transportError, type VendorError } from './vendor-errors.js';

function targetFrom(url: URL, dispatcher: Dispatcher, opaque: boolean): Target {
  return { origin: url.origin, basePath: url.pathname.replace(/\/+$/, ''), dispatcher, opaque };
}

const ENDPOINT_CACHE_LIMIT = 1000;

/** `baseUrls`: operator-set overrides (PROVIDER_BASE_URL_<ID>), so not SSRF-checked. */
export function createTargets(transport: Transport, baseUrls: Record<string, string>, allowPrivate: boolean): (connection: ProviderConnection) => Target | VendorError {
  // Base URLs are parsed once here, so the hot path does no URL work for catalog vendors.
  const vendorTargets = new Map<string, Target>();
  for (const [id, adapter] of Object.entries(adapters)) {
    const override = baseUrls[id];
    const base = override ?? adapter.defaultBaseUrl;
    if (base) vendorTargets.set(id, targetFrom(parseBaseUrl(id, base), transport.vendors, false));
  }
  for (const id of Object.keys(baseUrls)) {
    if (!adapters[id]) throw new Error(`PROVIDER_BASE_URL_${envName(id)}: "${id}" is not a provider in the catalog`);
  }
  const endpointTargets = new Map<string, Target | VendorError>();

  return function targetFor(connection: ProviderConnection): Target | VendorError {
    if (connection.endpoint === null || connection.endpoint === '') {
      return vendorTargets.get(connection.provider) ?? transportError(connection.provider, 'endpoint_not_allowed', 'connection has no endpoint');
    }
    let target = endpointTargets.get(connection.endpoint);
    if (!target) {
      try {
        target = targetFrom(validateEndpointUrl(connection.endpoint, allowPrivate), transport.endpoints, true);
      } catch {
        target = transportError(connection.provider, 'endpoint_not_allowed', 'endpoint URL is not allowed');
      }
      if (endpointTargets.size >= ENDPOINT_CACHE_LIMIT) endpointTargets.clear();
      endpointTargets.set(connection.endpoint, target);
    }
    return target;
  };
}

function envName(id: string): string {
  return id.toUpperCase().replace(/-/g, '_');
}

function parseBaseUrl(id: string, raw: string): URL {
  try {
    const url = new URL(raw);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // falls through to the error naming the setting
  }
  throw new Error(`PROVIDER_BASE_URL_${envName(id)}: "${raw}" is not an absolute http(s) URL`);
}
