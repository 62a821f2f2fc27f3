// The save-time check of an endpoint URL: an absolute https URL (http too where private
// endpoints are allowed) whose host is, and resolves only to, public addresses. The same SSRF
// rules as custom provider endpoints (src/providers/ssrf.ts); the sender's connections are
// checked again at connect time (src/webhooks/sender.ts).
import dns from 'node:dns';
import { invalidRequest } from '../errors.js';
import { isBlockedAddress, isIpLiteral } from '../providers/ssrf.js';

export const MAX_URL_LENGTH = 2048;

const invalid = (message: string) => invalidRequest('invalid_webhook_url', message, 'url');
const refused = (message: string) => invalidRequest('webhook_url_not_allowed', message, 'url');

/** Syntax and scheme; a query string is kept (receivers often carry a token there), a fragment is refused. */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url must be an absolute https URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('url must be an absolute https URL.');
  if (url.protocol === 'http:' && !allowPrivate) throw refused('url must use https.');
  if (url.username || url.password) throw invalid('url must not contain credentials; check the webhook-signature header instead.');
  if (url.hash || raw.includes('#')) throw invalid('url must not contain a fragment.');
  return url;
}

/** The whole save-time check; resolves to the URL as it will be stored. */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<string> {
  const url = parseWebhookUrl(raw, allowPrivate);
  if (allowPrivate) return url.href;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  // The resolved addresses stay out of the message: they would map internal DNS for the caller.
  const notPublic = () => refused(`url host ${host} is a loopback, private, link-local or metadata address, which is not allowed.`);
  if (isIpLiteral(host)) {
    if (isBlockedAddress(host)) throw notPublic();
    return url.href;
  }
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true });
  } catch {
    throw refused(`url host ${host} could not be resolved.`);
  }
  if (addresses.length === 0 || addresses.some((a) => isBlockedAddress(a.address))) throw notPublic();
  return url.href;
}
