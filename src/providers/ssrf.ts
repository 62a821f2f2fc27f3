// Server-side request forgery guard for user-supplied endpoints (custom, azure-openai).
// Two checks: at save time (assertEndpointAllowed) and at every new connection (guardedLookup and
// the guarded connector in transport.ts), so a name that later resolves inward is still refused.
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { invalidRequest } from '../errors.js';

const v4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, including 169.254.169.254 (cloud metadata)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) v4.addSubnet(net, prefix, 'ipv4');

const v6 = new BlockList();
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback, IPv4-compatible
  ['100::', 64], // discard
  ['2001:db8::', 32],
  ['64:ff9b:1::', 48], // local-use NAT64
  ['fc00::', 7], // unique local, including fd00:ec2::254 (AWS metadata)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
] as const) v6.addSubnet(net, prefix, 'ipv6');

/** The 8 groups of an IPv6 address; null if it is not one. */
function groupsOf(address: string): number[] | null {
  let canonical: string;
  try {
    // The URL parser canonicalises IPv6 (and turns a dotted IPv4 tail into hex groups).
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const [head = '', tail] = canonical.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  const groups = [...left, ...zeros, ...right].map((g) => parseInt(g, 16));
  return groups.length === 8 ? groups : null;
}

const v4From = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/** IPv4 carried inside an IPv6 address (mapped, NAT64, 6to4), which reaches the same host. */
function embeddedV4(g: number[]): string | null {
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(5) && g[5] === 0xffff) return v4From(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4From(g[6]!, g[7]!);
  if (g[0] === 0x2002) return v4From(g[1]!, g[2]!);
  return null;
}

/** True for loopback, private, link-local, CGNAT, metadata, multicast and reserved addresses (and non-IPs). */
export function isBlockedAddress(address: string): boolean {
  const bare = address.includes('%') ? address.slice(0, address.indexOf('%')) : address;
  const family = isIP(bare);
  if (family === 4) return v4.check(bare, 'ipv4');
  if (family !== 6) return true;
  const groups = groupsOf(bare);
  if (!groups) return true;
  const inner = embeddedV4(groups);
  if (inner && v4.check(inner, 'ipv4')) return true;
  return v6.check(bare, 'ipv6');
}

export const ENDPOINT_NOT_ALLOWED = 'ERR_ENDPOINT_NOT_ALLOWED';

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
    throw invalidRequest('endpoint_not_allowed', 'endpoint must use https.', 'endpoint');
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
      `endpoint host ${host} is a loopback, private, link-local or metadata address, which is not allowed.`,
      'endpoint',
    );
  if (isIP(host)) {
    if (isBlockedAddress(host)) throw refuse();
    return;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true });
  } catch {
    throw invalidRequest('endpoint_not_allowed', `endpoint host ${host} could not be resolved.`, 'endpoint');
  }
  if (addresses.length === 0 || addresses.some((a) => isBlockedAddress(a.address))) throw refuse();
}
