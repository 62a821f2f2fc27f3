import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEndpointAllowed, isBlockedAddress, PRIVATE_ENDPOINTS_ADVICE, validateEndpointUrl } from '../../src/providers/ssrf.js';
import { startFakeAzure, startFakeOpenAI, type FakeVendor } from '../fakes/vendors.js';
import { connection, rejection, routerWith, userSays } from './helpers.js';

describe('isBlockedAddress', () => {
  it.each([
    ['loopback', '127.0.0.1'], ['loopback range', '127.255.0.9'], ['private 10/8', '10.1.2.3'], ['private 172.16/12', '172.16.0.1'],
    ['private 172.16/12 top', '172.31.255.255'], ['private 192.168/16', '192.168.1.1'], ['link-local', '169.254.10.10'],
    ['cloud metadata', '169.254.169.254'], ['CGNAT', '100.64.0.1'], ['this network', '0.0.0.0'], ['multicast', '224.0.0.1'],
    ['broadcast', '255.255.255.255'], ['IPv6 loopback', '::1'], ['IPv6 unspecified', '::'], ['unique local', 'fc00::1'],
    ['AWS IPv6 metadata', 'fd00:ec2::254'], ['IPv6 link-local', 'fe80::1'], ['IPv6 link-local with zone', 'fe80::1%eth0'],
    ['IPv6 multicast', 'ff02::1'], ['IPv4-mapped loopback', '::ffff:127.0.0.1'], ['IPv4-mapped metadata (hex)', '::ffff:a9fe:a9fe'],
    ['NAT64 of metadata', '64:ff9b::a9fe:a9fe'], ['6to4 of loopback', '2002:7f00:1::1'], ['not an address', 'localhost'],
  ])('blocks %s (%s)', (_name, address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'allows public %s',
    (address) => expect(isBlockedAddress(address)).toBe(false),
  );
});

describe('assertEndpointAllowed (save time)', () => {
  it.each([
    'https://127.0.0.1/v1', 'https://10.0.0.5:8000/v1', 'https://172.20.1.1', 'https://192.168.0.10', 'https://169.254.169.254/latest',
    'https://100.100.100.100', 'https://0.0.0.0', 'https://[::1]:8080', 'https://[fd00:ec2::254]', 'https://[fe80::1]',
    'https://[::ffff:127.0.0.1]', 'https://[::ffff:169.254.169.254]', 'https://224.0.0.251',
  ])('refuses %s with endpoint_not_allowed', async (url) => {
    const error = await rejection(assertEndpointAllowed(url, false));
    expect(error).toMatchObject({ statusCode: 400, type: 'invalid_request_error', code: 'endpoint_not_allowed', param: 'endpoint' });
  });

  it('refuses a name that resolves to loopback', async () => {
    const error = await rejection(assertEndpointAllowed('https://localhost:8443/v1', false));
    expect(error).toMatchObject({ code: 'endpoint_not_allowed', param: 'endpoint' });
    expect(error.message).toBe(`endpoint host localhost is a loopback, private, link-local or metadata address, refused because ${PRIVATE_ENDPOINTS_ADVICE}`);
  });

  it('names ALLOW_PRIVATE_ENDPOINTS, says it is off against SSRF, in every refusal', async () => {
    expect(PRIVATE_ENDPOINTS_ADVICE).toBe(
      'ALLOW_PRIVATE_ENDPOINTS is off (the default, so that no account can make the service reach its own network: server-side request forgery); ' +
        'an operator whose every account is trusted, e.g. a single-user install with a local model server (Ollama, vLLM, LM Studio), can set ALLOW_PRIVATE_ENDPOINTS=true.',
    );
    expect((await rejection(assertEndpointAllowed('http://127.0.0.1:11434/v1', false))).message).toBe(
      `endpoint http://127.0.0.1:11434 uses plain http, refused because ${PRIVATE_ENDPOINTS_ADVICE} Otherwise use https.`,
    );
    expect((await rejection(assertEndpointAllowed('https://10.0.0.5:8000/v1', false))).message).toContain('ALLOW_PRIVATE_ENDPOINTS=true');
    expect((await rejection(assertEndpointAllowed('https://no-such-host.invalid/v1', false))).message).toBe(
      `endpoint host no-such-host.invalid could not be resolved, so it cannot be checked to be public; refused because ${PRIVATE_ENDPOINTS_ADVICE}`,
    );
  });

  it('requires https unless private endpoints are allowed', async () => {
    expect(await rejection(assertEndpointAllowed('http://8.8.8.8/v1', false))).toMatchObject({ code: 'endpoint_not_allowed' });
    await expect(assertEndpointAllowed('http://127.0.0.1:11434/v1', true)).resolves.toBeUndefined();
    await expect(assertEndpointAllowed('https://localhost/v1', true)).resolves.toBeUndefined();
  });

  it('accepts a public address', async () => {
    await expect(assertEndpointAllowed('https://8.8.8.8/v1', false)).resolves.toBeUndefined();
  });
});

describe('validateEndpointUrl', () => {
  it.each([
    ['not a URL', 'not a url'], ['another scheme', 'ftp://example.com'], ['credentials', 'https://user:pass@example.com'],
    ['a query', 'https://example.com/v1?key=1'], ['a fragment', 'https://example.com/v1#x'], ['an empty query', 'https://example.com/v1?'],
  ])('refuses %s with invalid_endpoint', (_name, url) => {
    expect(() => validateEndpointUrl(url, true)).toThrow(expect.objectContaining({ code: 'invalid_endpoint', param: 'endpoint' }));
  });

  it('returns the parsed URL', () => {
    expect(validateEndpointUrl('https://my-res.openai.azure.com', false).hostname).toBe('my-res.openai.azure.com');
  });
});

describe('connect-time refusal (DNS rebinding, literals)', () => {
  let target: FakeVendor, azure: FakeVendor, vendor: FakeVendor;
  let env: ReturnType<typeof routerWith>;

  beforeAll(async () => {
    [target, azure, vendor] = await Promise.all([startFakeOpenAI(), startFakeAzure(), startFakeOpenAI()]);
    // Operator base URLs may be local; only user endpoints are guarded.
    env = routerWith({ allowPrivateEndpoints: false, baseUrls: { openai: vendor.baseUrl } });
  });
  afterAll(async () => {
    await env.router.close();
    await Promise.all([target.close(), azure.close(), vendor.close()]);
  });

  const port = (fake: FakeVendor) => new URL(fake.url).port;

  it.each([
    ['a name resolving to 127.0.0.1', (f: FakeVendor) => `https://localhost:${port(f)}/v1`],
    ['an IPv4 literal', (f: FakeVendor) => `https://127.0.0.1:${port(f)}/v1`],
    ['an IPv6 literal', (f: FakeVendor) => `https://[::1]:${port(f)}/v1`],
    ['plain http', (f: FakeVendor) => `${f.baseUrl}`],
  ])('refuses a custom endpoint given as %s before any byte is sent, and falls back', async (_name, endpoint) => {
    target.reset();
    const result = await env.router.call(userSays('hi'), [
      connection('custom', target.apiKey, { priority: 0, endpoint: endpoint(target) }),
      connection('openai', vendor.apiKey, { priority: 1 }),
    ]);
    expect(result.attempts[0]).toMatchObject({ provider: 'custom', status: null, outcome: 'failed', reason: 'endpoint_not_allowed' });
    expect(result.provider).toBe('openai');
    expect(target.requests).toHaveLength(0);
  });

  it('guards azure-openai endpoints too', async () => {
    const error = await rejection(
      env.router.call({ ...userSays('hi'), model: 'my-deployment' }, [connection('azure-openai', azure.apiKey, { endpoint: `https://localhost:${port(azure)}` })]),
    );
    expect(error).toMatchObject({ statusCode: 502, code: 'upstream_unavailable' });
    expect(error.message).toBe(
      'All providers failed: azure-openai (endpoint_not_allowed). The endpoint of azure-openai is a loopback, private, link-local or metadata address ' +
        `or uses plain http, refused because ${PRIVATE_ENDPOINTS_ADVICE}`,
    );
    expect(azure.requests).toHaveLength(0);
  });

  it('reaches a local endpoint when private endpoints are allowed', async () => {
    const open = routerWith({ allowPrivateEndpoints: true });
    try {
      const result = await open.router.call(userSays('hi'), [connection('custom', target.apiKey, { endpoint: `http://localhost:${port(target)}/v1` })]);
      expect(result.content).toBe('echo: hi');
    } finally {
      await open.router.close();
    }
  });
});
