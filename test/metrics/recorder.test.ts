// The recorder on its own: how attempts are classified, the instance read's cache, and the
// recorder that does nothing when metrics are off.
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../src/metrics/catalog.js';
import { disabledMetrics } from '../../src/metrics/disabled.js';
import { createMetrics } from '../../src/metrics/recorder.js';
import type { Attempt } from '../../src/providers/types.js';
import { parsePrometheusText, valueOf } from '../helpers/prometheus-text.js';

const read = async (metrics: ReturnType<typeof createMetrics>) => parsePrometheusText(await metrics.scrape());
const attempt = (provider: string, outcome: Attempt['outcome'], reason?: string): Attempt => ({
  provider,
  status: outcome === 'skipped' ? null : outcome === 'ok' ? 200 : 500,
  outcome,
  latencyMs: outcome === 'skipped' ? 0 : 12.5,
  ...(reason ? { reason } : {}),
});

describe('the metrics recorder', () => {
  it('a failed attempt followed by another try is a fallback; the last failed one is the error; skipped ones are not timed', async () => {
    const metrics = createMetrics({ providers: ['openai', 'groq', 'anthropic'] });
    metrics.providerAttempts([
      attempt('openai', 'failed', 'rate_limited'),
      attempt('openai', 'failed', 'rate_limited'), // the retry after a short Retry-After
      attempt('groq', 'skipped', 'circuit_open'),
      attempt('anthropic', 'failed', 'timeout'),
      attempt('groq', 'skipped', 'circuit_open'),
    ]);
    metrics.providerAttempts([attempt('unknown-vendor', 'ok')]);
    const f = await read(metrics);
    const count = (provider: string, outcome: string, reason: string) => valueOf(f, METRICS.attempts.name, { provider, outcome, reason });
    expect(count('openai', 'fallback', 'rate_limited')).toBe(2);
    expect(count('groq', 'skipped', 'circuit_open')).toBe(2);
    expect(count('anthropic', 'error', 'timeout')).toBe(1);
    expect(count('other', 'ok', 'none')).toBe(1);
    expect(count('anthropic', 'ok', 'none')).toBe(0);
    expect(valueOf(f, `${METRICS.attemptDuration.name}_count`, { provider: 'openai', outcome: 'fallback' })).toBe(2);
    expect(valueOf(f, `${METRICS.attemptDuration.name}_sum`, { provider: 'openai', outcome: 'fallback' })).toBeCloseTo(0.025, 9);
    expect(valueOf(f, `${METRICS.attemptDuration.name}_count`, { provider: 'groq', outcome: 'skipped' })).toBeUndefined();
  });

  it('circuits: the worst state per provider and the count of connections not closed', async () => {
    const metrics = createMetrics({ providers: ['openai', 'groq'] });
    metrics.watchCircuits(() => [
      { provider: 'openai', state: 'half-open' },
      { provider: 'openai', state: 'open' },
      { provider: 'openai', state: 'closed' },
      { provider: 'groq', state: 'half-open' },
      { provider: 'not-in-catalog', state: 'open' },
    ]);
    const f = await read(metrics);
    expect(valueOf(f, METRICS.circuitState.name, { provider: 'openai' })).toBe(2);
    expect(valueOf(f, METRICS.openCircuits.name, { provider: 'openai' })).toBe(2);
    expect(valueOf(f, METRICS.circuitState.name, { provider: 'groq' })).toBe(1);
    expect(valueOf(f, METRICS.circuitState.name, { provider: 'not-in-catalog' })).toBeUndefined();
  });

  it('the instance counts are read at most once per cache period, and concurrent scrapes share one read', async () => {
    const metrics = createMetrics({ providers: [] });
    let reads = 0;
    let release: () => void = () => {};
    metrics.watchInstances(async () => {
      reads += 1;
      await new Promise<void>((resolve) => (release = resolve));
      return { pending: 4, running: reads };
    }, 200);
    const scrapes = [metrics.scrape(), metrics.scrape(), metrics.scrape()];
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    const texts = await Promise.all(scrapes);
    expect(reads).toBe(1);
    for (const text of texts) expect(valueOf(parsePrometheusText(text), METRICS.instances.name, { status: 'pending' })).toBe(4);
    // Within the period: the cached values, no read.
    expect(valueOf(await read(metrics), METRICS.instances.name, { status: 'running' })).toBe(1);
    expect(reads).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const next = read(metrics);
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    expect(valueOf(await next, METRICS.instances.name, { status: 'running' })).toBe(2);
    expect(reads).toBe(2);
  });

  it('a failed instance read keeps the last values and is reported, and the scrape still answers', async () => {
    const errors: string[] = [];
    const metrics = createMetrics({ providers: [], onCollectError: (_e, what) => errors.push(what) });
    metrics.watchInstances(async () => {
      throw new Error('database down');
    }, 0);
    expect(valueOf(await read(metrics), METRICS.instances.name, { status: 'pending' })).toBe(0);
    expect(errors).toEqual(['instances']);
  });

  it('model calls and spend by kind; runs by mode and status; http requests by route', async () => {
    const metrics = createMetrics({ providers: [] });
    metrics.modelCall('direct', true, 2_000_000); // nanos: $0.002
    metrics.modelCall('direct', true, 1_000_000);
    metrics.modelCall('ladder', false, 0);
    metrics.runFinished('async', 'cancelled');
    metrics.httpRequest('GET', '/v1/providers', 200, 0.004, null);
    metrics.httpRequest('GET', '/v1/providers', 200, 0.006, null);
    metrics.httpRequest('POST', '/v1/chat/completions', 200, 0.5, 0.0003);
    const f = await read(metrics);
    expect(valueOf(f, METRICS.modelCalls.name, { kind: 'direct', outcome: 'ok' })).toBe(2);
    expect(valueOf(f, METRICS.modelCalls.name, { kind: 'ladder', outcome: 'error' })).toBe(1);
    expect(valueOf(f, METRICS.spend.name, { kind: 'direct' })).toBeCloseTo(0.003, 12);
    expect(valueOf(f, METRICS.spend.name, { kind: 'ladder' })).toBe(0);
    expect(valueOf(f, METRICS.runs.name, { mode: 'async', status: 'cancelled' })).toBe(1);
    expect(valueOf(f, METRICS.runs.name, { mode: 'sync', status: 'completed' })).toBe(0);
    expect(valueOf(f, METRICS.httpRequests.name, { method: 'GET', route: '/v1/providers', status: '200' })).toBe(2);
    expect(valueOf(f, `${METRICS.httpDuration.name}_bucket`, { method: 'GET', route: '/v1/providers', le: '0.005' })).toBe(1);
    expect(valueOf(f, `${METRICS.overhead.name}_count`, { route: '/v1/chat/completions' })).toBe(1);
    expect(valueOf(f, `${METRICS.overhead.name}_count`, { route: '/v1/providers' })).toBeUndefined();
  });

  it("log lines dropped: the destination's count since the start, read at each scrape, never going back", async () => {
    const metrics = createMetrics({ providers: [] });
    expect(valueOf(await read(metrics), METRICS.logLinesDropped.name)).toBe(0);
    let dropped = 0;
    metrics.watchLogDrops(() => dropped);
    dropped = 7;
    expect(valueOf(await read(metrics), METRICS.logLinesDropped.name)).toBe(7);
    dropped = 12;
    expect(valueOf(await read(metrics), METRICS.logLinesDropped.name)).toBe(12);
    expect(valueOf(await read(metrics), METRICS.logLinesDropped.name)).toBe(12);
    dropped = 5; // a destination's count does not go back; were it read lower, the counter would not either
    expect(valueOf(await read(metrics), METRICS.logLinesDropped.name)).toBe(12);
  });

  it('two recorders in one process keep separate registries', async () => {
    const a = createMetrics({ providers: [] });
    const b = createMetrics({ providers: [] });
    a.runFinished('sync', 'completed');
    expect(valueOf(await read(b), METRICS.runs.name, { mode: 'sync', status: 'completed' })).toBe(0);
  });

  it('when off, the same calls do nothing', async () => {
    expect(disabledMetrics.enabled).toBe(false);
    disabledMetrics.httpRequest('GET', '/', 200, 1, null);
    disabledMetrics.providerAttempts([attempt('openai', 'ok')]);
    disabledMetrics.modelCall('direct', true, 1);
    disabledMetrics.workerBusy(2);
    expect(await disabledMetrics.scrape()).toBe('');
  });
});
