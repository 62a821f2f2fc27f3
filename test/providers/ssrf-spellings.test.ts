// Issue 8, item 8: every spelling of a non-public address is refused, both when a connection is
// saved and when the guarded agent is about to connect; only globally routable unicast passes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEndpointAllowed, isBlockedAddress, PRIVATE_ENDPOINTS_ADVICE } from '../../src/providers/ssrf.js';
import { startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { build, createUser, type TestApp } from '../helpers/build.js';
import { connection, rejection, routerWith, userSays } from './helpers.js';

// [what it is, the host as written in a URL]
const refused: Array<[string, string]> = [
  ['IPv4-translated loopback (::ffff:0:0:0/96)', '[::ffff:0:127.0.0.1]'],
  ['IPv4-translated, hex', '[::ffff:0:7f00:1]'],
  ['IPv4-translated public address', '[::ffff:0:8.8.8.8]'],
  ['IPv4-mapped loopback, long form', '[0:0:0:0:0:ffff:127.0.0.1]'],
  ['IPv4-mapped loopback, hex', '[::ffff:7f00:1]'],
  ['IPv4-mapped metadata', '[::ffff:169.254.169.254]'],
  ['IPv4-compatible loopback', '[::127.0.0.1]'],
  ['IPv4-compatible public address', '[::8.8.8.8]'],
  ['NAT64 of loopback', '[64:ff9b::127.0.0.1]'],
  ['NAT64 of metadata', '[64:ff9b::a9fe:a9fe]'],
  ['local-use NAT64', '[64:ff9b:1::808:808]'],
  ['6to4 of loopback', '[2002:7f00:1::]'],
  ['6to4 of 192.168.1.1', '[2002:c0a8:101::1]'],
  ['6to4 of 10.0.0.1', '[2002:a00:1::1]'],
  ['Teredo', '[2001:0:4136:e378:8000:63bf:3fff:fdd2]'],
  ['IPv6 documentation', '[2001:db8::1]'],
  ['IPv6 benchmarking', '[2001:2::1]'],
  ['ORCHIDv2', '[2001:20::1]'],
  ['unique local (AWS metadata)', '[fd00:ec2::254]'],
  ['IPv6 link-local', '[fe80::1]'],
  ['IPv6 site-local', '[fec0::1]'],
  ['IPv6 multicast', '[ff02::1]'],
  ['IPv6 unspecified', '[::]'],
  ['IPv6 loopback', '[::1]'],
  ['IPv6 loopback, long form', '[0:0:0:0:0:0:0:1]'],
  ['IPv6 discard', '[100::1]'],
  ['IPv6 outside 2000::/3', '[4000::1]'],
  ['loopback, decimal', '2130706433'],
  ['loopback, hex', '0x7f000001'],
  ['loopback, octal', '0177.0.0.1'],
  ['loopback, shortened', '127.1'],
  ['loopback, mixed hex', '0x7f.1'],
  ['this network', '0.0.0.0'],
  ['this network, shortest', '0'],
  ['metadata', '169.254.169.254'],
  ['metadata, hex', '0xa9fea9fe'],
  ['private 10/8, octal', '012.0.0.1'],
  ['private 172.16/12', '172.16.0.1'],
  ['private 192.168/16, decimal', '3232235777'],
  ['CGNAT', '100.64.0.1'],
  ['IETF protocol assignments', '192.0.0.8'],
  ['benchmarking', '198.18.0.1'],
  ['documentation', '192.0.2.1'],
  ['multicast', '224.0.0.1'],
  ['reserved', '240.0.0.1'],
  ['broadcast', '255.255.255.255'],
];

const allowed: Array<[string, string]> = [
  ['public IPv4', '8.8.8.8'],
  ['public IPv4, decimal', '134744072'],
  ['public IPv6', '[2606:4700:4700::1111]'],
  ['IPv4-mapped public address', '[::ffff:8.8.8.8]'],
  ['NAT64 of a public address', '[64:ff9b::808:808]'],
  ['6to4 of a public address', '[2002:808:808::1]'],
];

describe('save time', () => {
  it.each(refused)('refuses %s (%s) with 400 endpoint_not_allowed', async (_what, host) => {
    const error = await rejection(assertEndpointAllowed(`https://${host}/v1`, false));
    expect(error).toMatchObject({ statusCode: 400, type: 'invalid_request_error', code: 'endpoint_not_allowed', param: 'endpoint' });
  });

  it.each(allowed)('accepts %s (%s)', async (_what, host) => {
    await expect(assertEndpointAllowed(`https://${host}/v1`, false)).resolves.toBeUndefined();
  });

  it('classifies addresses as DNS gives them, and refuses what is not an address', () => {
    expect(isBlockedAddress('::ffff:0:7f00:1')).toBe(true);
    expect(isBlockedAddress('fe80::1%eth0')).toBe(true);
    expect(isBlockedAddress('2606:4700:4700::1111')).toBe(false);
    expect(isBlockedAddress('localhost')).toBe(true);
    expect(isBlockedAddress('')).toBe(true);
  });

  describe('through POST /v1/providers', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await build({ ALLOW_PRIVATE_ENDPOINTS: 'false' });
    });
    afterAll(() => t.close());

    it('refuses https://[::ffff:0:127.0.0.1]/ and stores nothing', async () => {
      const user = await createUser(t.app);
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/providers',
        headers: user.headers,
        payload: { provider: 'custom', api_key: 'sk-local', endpoint: 'https://[::ffff:0:127.0.0.1]/' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        error: {
          message: `endpoint host ::ffff:0:7f00:1 is a loopback, private, link-local or metadata address, refused because ${PRIVATE_ENDPOINTS_ADVICE}`,
          type: 'invalid_request_error',
          code: 'endpoint_not_allowed',
          param: 'endpoint',
        },
      });
      expect(await t.database.query('select * from provider_connections')).toEqual([]);
    });
  });
});

describe('connect time', () => {
  let target: FakeVendor;
  let env: ReturnType<typeof routerWith>;
  beforeAll(async () => {
    target = await startFakeOpenAI();
    env = routerWith({ allowPrivateEndpoints: false, connectTimeoutMs: 500 });
  });
  afterAll(async () => {
    await env.router.close();
    await target.close();
  });

  it.each(refused)('refuses %s (%s) before connecting', async (_what, host) => {
    const port = new URL(target.url).port;
    const error = await rejection(env.router.call(userSays('hi'), [connection('custom', target.apiKey, { endpoint: `https://${host}:${port}/v1` })]));
    expect(error).toMatchObject({ statusCode: 502, code: 'upstream_unavailable' });
    expect(error.attempts).toEqual([{ provider: 'custom', status: null, outcome: 'failed', reason: 'endpoint_not_allowed', latencyMs: expect.any(Number) }]);
    expect(target.requests).toHaveLength(0);
  });
});
