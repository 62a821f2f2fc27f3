// Server-side request forgery guard for user-supplied endpoints (custom, azure-openai).
// Two checks: at save time (assertEndpointAllowed) and at every new connection (guardedLookup and
// the guarded connector in transport.ts), so a name that later resolves inward is still refused.
// Addresses are classified by ipaddr.js (a maintained table of special-purpose ranges): only
// globally routable unicast passes, and an IPv4 address carried inside IPv6 is judged as IPv4.
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { invalidRequest } from '../errors.js';

type IPv6 = ipaddr.IPv6;

// IANA's global unicast block; everything outside it (other than the embeddings below) is not routable.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
// Deprecated IPv4-compatible addresses (::a.b.c.d): ipaddr.js calls them unicast, they are not.
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/** Parses any spelling of an address (zone ids, brackets, dotted IPv6 tails); null if it is not one. */
function parseAddress(raw: string): ipaddr.IPv4 | IPv6 | null {
  let text = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  if (text.includes(':')) {
    // ipaddr.js reads `::a.b.c.d` as IPv4-mapped; the URL parser turns dotted tails into the right hex groups.
    try {
      text = new URL(`http://[${text}]/`).hostname.slice(1, -1);
    } catch {
      return null;
    }
    return ipaddr.IPv6.isValid(text) ? ipaddr.IPv6.parse(text) : null;
  }
  // Accepts the decimal, octal, hex and shortened IPv4 forms too (2130706433, 0177.0.0.1, 127.1).
  return ipaddr.IPv4.isValid(text) ? ipaddr.IPv4.parse(text) : null;
}

const v4At = (parts: number[], at: number) => new ipaddr.IPv4([parts[at]! >> 8, parts[at]! & 255, parts[at + 1]! >> 8, parts[at + 1]! & 255]);

/** The IPv4 address an IPv6 one stands for (mapped, well-known NAT64, 6to4); null if none. */
function embeddedV4(address: IPv6): ipaddr.IPv4 | null {
  const range = address.range();
  if (range === 'ipv4Mapped') return address.toIPv4Address();
  if (range === 'rfc6052' && address.match(NAT64_WELL_KNOWN)) return v4At(address.parts, 6);
  if (range === '6to4') return v4At(address.parts, 1);
  return null;
}

function isGlobalUnicast(address: ipaddr.IPv4 | IPv6): boolean {
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  const v6 = address as IPv6;
  const inner = embeddedV4(v6);
  if (inner) return inner.range() === 'unicast';
  // Refused here, among others: IPv4-translated (::ffff:0:0:0/96), local-use NAT64 (64:ff9b:1::/48),
  // Teredo (2001::/32), ORCHID, documentation and benchmarking ranges, unique and link local.
  return v6.range() === 'unicast' && v6.match(GLOBAL_UNICAST_V6) && !v6.match(IPV4_COMPATIBLE);
}

/** True for every address that is not globally routable unicast, in any spelling (and for non-IPs). */
export function isBlockedAddress(address: string): boolean {
  const parsed = parseAddress(address);
  return parsed === null || !isGlobalUnicast(parsed);
}

/** Whether a host (as a URL gives it) is an IP literal rather than a name. */
export function isIpLiteral(host: string): boolean {
  return parseAddress(host) !== null;
}

export const ENDPOINT_NOT_ALLOWED = 'ERR_ENDPOINT_NOT_ALLOWED';

/**
 * Ends every refusal of an endpoint, at save time and at call time: the setting that lifts it,
 * and why it is off. A newcomer's first endpoint is usually a local model server.
 */
export const PRIVATE_ENDPOINTS_ADVICE =
  'ALLOW_PRIVATE_ENDPOINTS is off (the default, so that no account can make the service reach its own network: server-side request forgery); ' +
  'an operator whose every account is trusted, e.g. a single-user install with a local model server (Ollama, vLLM, LM Studio), can set ALLOW_PRIVATE_ENDPOINTS=true.';

/** The call-time sentence for the providers whose endpoint was refused; '' when none was. */
export function endpointRefusalAdvice(refusedProviders: string[]): string {
  if (refusedProviders.length === 0) return '';
  const listed = [...new Set(refusedProviders)].join(', ');
  return ` The endpoint of ${listed} is a loopback, private, link-local or metadata address or uses plain http, refused because ${PRIVATE_ENDPOINTS_ADVICE}`;
}

export function endpointRefusal(hostname: string): Error {
  // The resolved address stays out of the message: it would map internal DNS for the caller.
  return Object.assign(new Error(`endpoint host ${hostname} resolves to a non-public address`), { code: ENDPOINT_NOT_ALLOWED });
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `dns.lookup` replacement for net.connect that refuses the connection if any resolved address is blocked. */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    if (addresses.length === 0 || addresses.some((a) => isBlockedAddress(a.address))) {
      return callback(endpointRefusal(hostname), []);
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
}

const bareHost = (hostname: string) => (hostname.startsWith('[') ? hostname.slice(1, -1) : hostname);

/**
 * Syntax and scheme of a user-supplied endpoint: absolute http(s) URL, no credentials, no query
 * or fragment; plain http only when private endpoints are allowed (local servers).
 */
export function validateEndpointUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidRequest('invalid_endpoint', 'endpoint must be an absolute https URL.', 'endpoint');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalidRequest('invalid_endpoint', 'endpoint must be an absolute https URL.', 'endpoint');
  }
  if (url.protocol === 'http:' && !allowPrivate) {
    throw invalidRequest('endpoint_not_allowed', `endpoint ${url.origin} uses plain http, refused because ${PRIVATE_ENDPOINTS_ADVICE} Otherwise use https.`, 'endpoint');
  }
  if (url.username || url.password) {
    throw invalidRequest('invalid_endpoint', 'endpoint must not contain credentials; send the key as api_key.', 'endpoint');
  }
  if (url.search || url.hash || raw.includes('?') || raw.includes('#')) {
    throw invalidRequest('invalid_endpoint', 'endpoint must not contain a query string or fragment.', 'endpoint');
  }
  return url;
}

/** Save-time check: the URL is valid and, unless private endpoints are allowed, every address it resolves to is public. */
export async function assertEndpointAllowed(raw: string, allowPrivate: boolean): Promise<void> {
  const url = validateEndpointUrl(raw, allowPrivate);
  if (allowPrivate) return;
  const host = bareHost(url.hostname);
  const refuse = () =>
    invalidRequest(
      'endpoint_not_allowed',
      `endpoint host ${host} is a loopback, private, link-local or metadata address, refused because ${PRIVATE_ENDPOINTS_ADVICE}`,
      'endpoint',
    );
  if (isIpLiteral(host)) {
    if (isBlockedAddress(host)) throw refuse();
    return;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true });
  } catch {
    // Unresolvable now is not proof of public later; a local name (a container's, /etc/hosts') is typical.
    throw invalidRequest('endpoint_not_allowed', `endpoint host ${host} could not be resolved, so it cannot be checked to be public; refused because ${PRIVATE_ENDPOINTS_ADVICE}`, 'endpoint');
  }
  if (addresses.length === 0 || addresses.some((a) => isBlockedAddress(a.address))) throw refuse();
}
