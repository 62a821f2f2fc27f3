// `npm run bench`: what the service adds to a chat completion. The same autocannon load goes
// (a) straight to a local upstream that answers at once, (b) through a bare HTTPS proxy to it
// (bench/bare-proxy.ts: the floor any Node.js TLS gateway pays on this machine) and (c) through
// the service over HTTPS to it, at 1 and 32 concurrent connections. Service minus direct is our
// overhead; service minus floor is what our own code costs above a TLS hop and a proxied call.
//
// Separate processes, so no two of them share an event loop: this one (load generator), the
// upstream, the bare proxy, and the service as `npm start` runs it (dist/src/server.js,
// embedded database in a temporary DATA_DIR). Settings: BENCH_DURATION (seconds per run, default 5),
// BENCH_LOG_LEVEL (the service's LOG_LEVEL, default info as in production), BENCH_METRICS=1 (Prometheus
// metrics on, through METRICS_TOKEN), BENCH_TRACES=1 (OpenTelemetry traces on, exported over OTLP to a local sink); NODE_OPTIONS is passed on to the service, to try V8 settings, and
// BENCH_NODE_ARGS goes on the service's command line (flags NODE_OPTIONS refuses, e.g. --cpu-prof).
//
// Also measured: start-up (spawn to a healthy /healthz, fresh DATA_DIR then the same one again),
// and the mixed load: direct chat at 8 connections alone, then while 4 synchronous 32-call
// ladders run back to back, alternated BENCH_MIXED_ROUNDS times (default 3) and pooled (on
// PostgreSQL too when BENCH_DATABASE_URL is set, and through the bare proxy, whose ladder is 32
// upstream calls in a row: the ratio any gateway shows for the same load), and the V8 heap
// the service allocates per proxied request, with its heaviest allocators (bench/alloc-probe.ts;
// BENCH_HEAP_PROFILE=<file> keeps the sampled profile). BENCH_SMOKE=1 makes every run short (CI);
// BENCH_ONLY=mixed skips the chat runs (start-up and mixed load only); BENCH_ONLY=start times
// start-up alone, BENCH_ROUNDS times (default 5): wall clock and the service's CPU time to healthy,
// with the load average; BENCH_ONLY=alloc runs the service alone at 32 connections (its CPU per
// request) and the allocation probe, nothing else. BENCH_SERVICE_DIST=<another checkout's dist>
// runs that build's service instead, to compare two builds with the same bench. The last line is
// the JSON report (bench/report.ts).
// Streaming (`stream: true`) has its own: `npm run bench:stream` (bench/chat-stream.ts).
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { Agent, request } from 'undici';
import type { ProbeFailure, ProbeResult, ProbeStart } from './alloc-probe.js';
import { figure, printReport, SMOKE, type Figure } from './report.js';
import { call, children, cpuTimeUs, nextMessage, startBareProxy, startService, startUpstream, stopChildren, type Service } from './service-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const DURATION_S = Number(process.env.BENCH_DURATION ?? (SMOKE ? 1 : 5));
/** The mixed-load row: direct chat at this many connections, beside this many ladders of 32 sequential calls. */
const MIXED_CONNECTIONS = 8;
const MIXED_LADDERS = 4;
/**
 * Alone and beside the ladders, alternated this many times, each phase's latencies pooled: one
 * 5 s phase of each moved the ratio from 1.2x to 1.7x between two runs of the bench.
 */
const MIXED_ROUNDS = Number(process.env.BENCH_MIXED_ROUNDS ?? (SMOKE ? 1 : 3));
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const ONLY = process.env.BENCH_ONLY;
const CONCURRENCY = ONLY === 'mixed' ? [] : ONLY === 'alloc' ? [32] : [1, 32];

interface Run {
  target: 'direct' | 'floor' | 'service' | 'limited';
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  /** CPU time (user + system) the proxying process spent per request; null for direct. */
  cpuUs: number | null;
}

/** Percentile over exact latencies (autocannon's own histogram rounds to whole milliseconds). */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A process with the allocation probe (bench/alloc-probe.ts) loaded: the service, or the floor. */
type Probed = Pick<Service, 'child' | 'pid'>;

// A probe answers in well under a second, or a few with a large sampled profile to write.
const PROBE_TIMEOUT_MS = 60_000;

/** Sends `message` to the process's allocation probe and waits for its answer; throws if it failed, exited or never answers. */
async function askProbe<T>(service: Probed, message: object): Promise<T> {
  const name = `the allocation probe (pid ${service.pid}), asked ${JSON.stringify(message)},`;
  const answer = nextMessage<T | ProbeFailure>(service.child, name, PROBE_TIMEOUT_MS);
  service.child.send(message);
  const reply = await answer;
  if ((reply as ProbeFailure).probe === 'failed') throw new Error(`${name} failed: ${(reply as ProbeFailure).error}`);
  return reply as T;
}

/**
 * V8 heap bytes the process allocates per request: `requests` requests at 1 connection, the
 * probe counting in between. With `sample`, also the heaviest allocating functions, per request.
 */
async function allocation(service: Probed, url: string, headers: Record<string, string>, body: string, requests: number, sample: boolean) {
  await askProbe(service, { probe: 'start', sample } satisfies ProbeStart);
  const cpuBefore = cpuTimeUs(service.pid);
  const mainBefore = cpuTimeUs(service.pid, true);
  const result = await autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, connections: 1, amount: requests, timeout: 10 });
  const cpuUs = (cpuTimeUs(service.pid) ?? Number.NaN) - (cpuBefore ?? Number.NaN);
  const mainUs = (cpuTimeUs(service.pid, true) ?? Number.NaN) - (mainBefore ?? Number.NaN);
  const probe = await askProbe<ProbeResult>(service, { probe: 'stop' });
  if (result.errors > 0 || result.non2xx > 0) throw new Error(`allocation run: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
  const sent = result.requests.total;
  return { perRequest: probe.bytes / sent, cpuUs: cpuUs / sent, mainUs: mainUs / sent, collections: probe.collections, top: probe.top.map((a) => ({ at: a.at, perRequest: a.bytes / sent })), sampledPerRequest: probe.sampledBytes / sent };
}

async function load(url: string, headers: Record<string, string>, body: string, connections: number, durationS: number) {
  const latencies: number[] = [];
  const instance = autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, connections, duration: durationS, timeout: 10 });
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const result = await instance;
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(`${url}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers`);
  }
  return { ...summarize(latencies, result.duration), latencies, seconds: result.duration };
}

function summarize(latencies: number[], seconds: number) {
  const sorted = Float64Array.from(latencies).sort();
  return { rps: sorted.length / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), requests: sorted.length };
}

/** Phases of one kind, their latencies pooled. */
function pooled(phases: Array<{ latencies: number[]; seconds: number }>) {
  return summarize(phases.flatMap((p) => p.latencies), phases.reduce((sum, p) => sum + p.seconds, 0));
}

function table(runs: Run[]): string {
  const pad = (s: string, n: number) => s.padStart(n);
  const ms = (v: number) => v.toFixed(3);
  const rows = [
    ['connections', 'target', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'CPU µs/req'],
    ...runs.map((r) => [String(r.connections), r.target, r.rps.toFixed(0), ms(r.p50), ms(r.p99), String(r.requests), r.cpuUs === null ? '' : r.cpuUs.toFixed(0)]),
  ];
  const lines = rows.map((row) => row.map((cell, i) => pad(cell, [11, 8, 9, 9, 9, 9, 10][i]!)).join('  '));
  lines.splice(1, 0, '-'.repeat(lines[0]!.length));
  lines.push('', 'Added over direct (limited: a key with every limit set), and [over the bare TLS proxy]:');
  for (const c of CONCURRENCY) {
    const direct = runs.find((r) => r.target === 'direct' && r.connections === c)!;
    const floor = runs.find((r) => r.target === 'floor' && r.connections === c)!;
    for (const target of ['floor', 'service', 'limited'] as const) {
      const service = runs.find((r) => r.target === target && r.connections === c)!;
      const overFloor = target === 'floor' ? '' : ` [p50 +${ms(service.p50 - floor.p50)} ms, ${floor.rps.toFixed(0)} req/s]`;
      lines.push(
        `  ${pad(String(c), 2)} connection${c === 1 ? ' ' : 's'} ${target.padEnd(7)}: p50 +${ms(service.p50 - direct.p50)} ms, p99 +${ms(service.p99 - direct.p99)} ms, ` +
          `throughput ${service.rps.toFixed(0)} vs ${direct.rps.toFixed(0)} req/s${overFloor}`,
      );
    }
  }
  return lines.join('\n');
}

async function stopService(service: Service): Promise<void> {
  if (service.child.exitCode === null && service.child.signalCode === null) {
    service.child.kill('SIGTERM');
    await once(service.child, 'exit');
  }
  children.splice(children.indexOf(service.child), 1);
}

/**
 * Start-up alone, round after round on a new DATA_DIR then on the same one again: the medians of
 * wall clock (spawn to a healthy /healthz) and of the service's CPU time by then, which a busy
 * machine inflates far less.
 */
async function startUpRounds(upstream: string, adminToken: string, tls: Agent): Promise<Figure[]> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 5));
  const runs: Record<'fresh' | 'existing', { ms: number; cpuMs: number }[]> = { fresh: [], existing: [] };
  for (let round = 0; round < rounds; round++) {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-bench-start-'));
    try {
      for (const kind of ['fresh', 'existing'] as const) {
        const service = await startService(upstream, dataDir, adminToken, tls);
        const cpuMs = (cpuTimeUs(service.pid) ?? NaN) / 1000;
        await stopService(service);
        runs[kind].push({ ms: service.startMs, cpuMs });
        process.stdout.write(`start ${kind.padEnd(8)} ${service.startMs.toFixed(0).padStart(5)} ms, CPU ${cpuMs.toFixed(0).padStart(5)} ms (load average ${loadavg()[0]!.toFixed(1)})\n`);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return [
    figure('start.fresh_data_dir', median(runs.fresh.map((r) => r.ms)), 'ms', { atMost: 2000 }),
    figure('start.existing_data_dir', median(runs.existing.map((r) => r.ms)), 'ms', { atMost: 1000 }),
    figure('start.fresh_data_dir.cpu', median(runs.fresh.map((r) => r.cpuMs)), 'ms'),
    figure('start.existing_data_dir.cpu', median(runs.existing.map((r) => r.cpuMs)), 'ms'),
  ];
}

/** An account with the upstream as its openai connection; returns its key's authorization header. */
async function setUpAccount(dispatcher: Agent, service: string, admin: Record<string, string>): Promise<{ username: string; auth: Record<string, string> }> {
  const username = `bench-${randomBytes(3).toString('hex')}`;
  await call(dispatcher, `${service}/v1/admin/accounts`, admin, { username });
  const { key } = (await call(dispatcher, `${service}/v1/admin/accounts/${username}/api-keys`, admin, {})) as { key: string };
  const auth = { authorization: `Bearer ${key}` };
  await call(dispatcher, `${service}/v1/providers`, auth, { provider: 'openai', api_key: 'sk-bench-upstream-key' });
  return { username, auth };
}

const sequentialLadder = {
  name: 'Thirty-two calls in a row',
  exit: 'a',
  steps: [{ id: 'a', name: 'A', type: 'sequential', nodes: 32, fields: [{ name: 'Q', type: 'text', from: 'input.context' }], systemPrompt: 'Go on.' }],
};

/** Saves the mixed-load row's ladder for the account; returns the URL that runs it. */
async function mixedLadder(dispatcher: Agent, service: string, account: { username: string; auth: Record<string, string> }): Promise<string> {
  const put = await request(`${service}/v1/${account.username}/mixed`, {
    method: 'PUT', dispatcher, headers: { 'content-type': 'application/json', ...account.auth }, body: JSON.stringify({ config: sequentialLadder }),
  });
  await put.body.dump();
  if (put.statusCode >= 300) throw new Error(`saving the ladder failed: ${put.statusCode}`);
  return `${service}/v1/${account.username}/mixed/chat/completions`;
}

/**
 * The mixed-load row: direct chat (`url`) at MIXED_CONNECTIONS alone, then while MIXED_LADDERS
 * 32-call ladders (`ladder`) run back to back, MIXED_ROUNDS times. Returns both kinds of phase
 * pooled, and the ladders finished.
 */
async function mixedLoad(dispatcher: Agent, target: { url: string; ladder: string; auth: Record<string, string> }, body: string) {
  const { url, ladder, auth } = target;
  await call(dispatcher, ladder, auth, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'warm' }] });
  if (!SMOKE) await load(url, auth, body, MIXED_CONNECTIONS, 1);
  const alone = [];
  const loaded = [];
  let ladders = 0;
  for (let round = 0; round < MIXED_ROUNDS; round++) {
    alone.push(await load(url, auth, body, MIXED_CONNECTIONS, DURATION_S));
    let stop = false;
    const loops = Array.from({ length: MIXED_LADDERS }, async (_, k) => {
      for (let i = 0; !stop; i++) {
        await call(dispatcher, ladder, auth, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `mixed ${round} ${k} ${i}` }] });
        ladders += 1;
      }
    });
    await sleep(100);
    loaded.push(await load(url, auth, body, MIXED_CONNECTIONS, DURATION_S));
    stop = true;
    await Promise.all(loops);
  }
  return { alone: pooled(alone), loaded: pooled(loaded), ladders };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-bench-'));
  const pgDataDir = mkdtempSync(path.join(tmpdir(), 'ladder-bench-pg-'));
  const adminToken = randomBytes(24).toString('hex');
  const admin = { authorization: `Bearer ${adminToken}` };
  // The service's certificate is self-signed; autocannon does not verify it either.
  const tls = new Agent({ connect: { rejectUnauthorized: false } });
  const figures: Figure[] = [];
  try {
    const upstream = await startUpstream();
    if (ONLY === 'start') {
      printReport('chat', await startUpRounds(upstream, adminToken, tls));
      return;
    }
    process.stdout.write(`upstream  ${upstream}\nstarting the service (embedded database in ${dataDir}) ...\n`);
    // Start-up, on a fresh DATA_DIR (initdb, migrations, certificate) and again on the same one.
    const fresh = await startService(upstream, dataDir, adminToken, tls);
    await stopService(fresh);
    const probeEnv = process.env.BENCH_HEAP_PROFILE ? { BENCH_HEAP_PROFILE: process.env.BENCH_HEAP_PROFILE } : {};
    const started = await startService(upstream, dataDir, adminToken, tls, probeEnv, ['--import', path.join(here, 'alloc-probe.js')]);
    const { url: service, pid: servicePid } = started;
    process.stdout.write(`service   ${service} (LOG_LEVEL=${LOG_LEVEL}); ready in ${fresh.startMs.toFixed(0)} ms on a fresh DATA_DIR, ${started.startMs.toFixed(0)} ms on an existing one\n`);
    figures.push(figure('start.fresh_data_dir', fresh.startMs, 'ms', { atMost: 2000 }), figure('start.existing_data_dir', started.startMs, 'ms', { atMost: 1000 }));
    const floorProxy = await startBareProxy(upstream, path.join(dataDir, 'tls'), ['--import', path.join(here, 'alloc-probe.js')]);
    const { url: floor, pid: floorPid } = floorProxy;
    process.stdout.write(`floor     ${floor} (bare HTTPS proxy)\n`);

    const account = await setUpAccount(tls, service, admin);
    const { auth, username } = account;
    // A second key with every limit set (high enough never to refuse): the quota gate's cost.
    const limitedKey = (await call(tls, `${service}/v1/admin/accounts/${username}/api-keys`, admin, {})) as { key: string; id: string };
    const limits = { requests_per_minute: 1_000_000_000, tokens_per_minute: 1_000_000_000, usd_per_day: 1_000_000, usd_per_month: 9_000_000 };
    const put = await request(`${service}/v1/admin/api-keys/${limitedKey.id}/limits`, {
      method: 'PUT', dispatcher: tls, headers: { 'content-type': 'application/json', ...admin }, body: JSON.stringify(limits),
    });
    await put.body.dump();
    if (put.statusCode !== 200) throw new Error(`setting limits failed: ${put.statusCode}`);

    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 16 });
    const allTargets = [
      { target: 'direct' as const, url: `${upstream}/v1/chat/completions`, headers: { authorization: 'Bearer sk-bench-upstream-key' }, pid: undefined },
      { target: 'floor' as const, url: `${floor}/v1/chat/completions`, headers: { authorization: 'Bearer sk-bench-upstream-key' }, pid: floorPid },
      { target: 'service' as const, url: `${service}/v1/chat/completions`, headers: auth, pid: servicePid },
      { target: 'limited' as const, url: `${service}/v1/chat/completions`, headers: { authorization: `Bearer ${limitedKey.key}` }, pid: servicePid },
    ];
    const targets = ONLY === 'alloc' ? allTargets.filter((t) => t.target === 'service') : allTargets;
    const answer = await call(tls, `${service}/v1/chat/completions`, auth, JSON.parse(body));
    if (!String(answer.id).startsWith('ldr-chat-')) throw new Error(`unexpected answer: ${JSON.stringify(answer)}`);

    // The service's code paths are compiled by the JIT after a few thousand requests; warm it
    // (and the bare proxy) once, so that the first measured run is not the one paying for it.
    for (const { target, url, headers } of CONCURRENCY.length ? targets : []) if (target !== 'direct') await load(url, headers, body, 8, SMOKE ? 1 : 3);

    const runs: Run[] = [];
    for (const connections of CONCURRENCY) {
      for (const { target, url, headers, pid } of targets) {
        // Warm-up: connection pools, caches and the JIT; not measured (nor made in a smoke run).
        if (!SMOKE) await load(url, headers, body, connections, 1);
        const cpuBefore = cpuTimeUs(pid);
        const result = await load(url, headers, body, connections, DURATION_S);
        const cpuAfter = cpuTimeUs(pid);
        const cpuUs = cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / result.requests;
        runs.push({ target, connections, rps: result.rps, p50: result.p50, p99: result.p99, requests: result.requests, cpuUs });
        process.stdout.write(
          `  ${target} x${connections}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(3)} ms, p99 ${result.p99.toFixed(3)} ms` +
            `${cpuUs === null ? '' : `, ${cpuUs.toFixed(0)} µs CPU per request`}\n`,
        );
      }
    }
    if (runs.length > 0 && ONLY !== 'alloc') process.stdout.write(`\n${table(runs)}\n`);
    for (const r of runs) {
      const direct = runs.find((d) => d.target === 'direct' && d.connections === r.connections);
      if (!direct) {
        if (r.cpuUs !== null) figures.push(figure(`chat.${r.target}.c${r.connections}.cpu_per_request`, r.cpuUs / 1000, 'ms', { atMost: 0.1 }));
        continue;
      }
      const name = `chat.${r.target}.c${r.connections}`;
      figures.push(figure(`${name}.rps`, r.rps, '1/s'), figure(`${name}.p50`, r.p50, 'ms'), figure(`${name}.p99`, r.p99, 'ms'));
      if (r.target === 'direct') continue;
      figures.push(figure(`${name}.added_p50`, r.p50 - direct.p50, 'ms', r.target === 'service' && r.connections === 1 ? { atMost: 0.5 } : undefined));
      figures.push(figure(`${name}.added_p99`, r.p99 - direct.p99, 'ms', r.target === 'service' && r.connections === 1 ? { atMost: 1 } : undefined));
      if (r.cpuUs !== null) figures.push(figure(`${name}.cpu_per_request`, r.cpuUs / 1000, 'ms', r.target === 'service' && r.connections === 32 ? { atMost: 0.1 } : undefined));
    }

    // Allocation per proxied request, at 1 connection on the warm service; then where it comes from.
    if (CONCURRENCY.length > 0) {
      const serviceTarget = targets.find((t) => t.target === 'service')!;
      const allocRequests = SMOKE ? 500 : 5000;
      const allocated = await allocation(started, serviceTarget.url, serviceTarget.headers, body, allocRequests, false);
      const sampled = await allocation(started, serviceTarget.url, serviceTarget.headers, body, allocRequests, true);
      const kb = (bytes: number) => (bytes / 1024).toFixed(2);
      process.stdout.write(
        `\nAllocated on the V8 heap per proxied request (1 connection, ${allocRequests} requests): ${kb(allocated.perRequest)} KB, ` +
          `${allocated.collections} collections, ${allocated.cpuUs.toFixed(0)} µs CPU per request (${allocated.mainUs.toFixed(0)} µs on the main thread); heap sampling (${kb(sampled.sampledPerRequest)} KB per request sampled), heaviest allocators:\n`,
      );
      for (const a of sampled.top) process.stdout.write(`  ${kb(a.perRequest).padStart(6)} KB  ${a.at}\n`);
      // The floor measured the same way, warmed first (BENCH_ONLY=alloc sends it nothing before).
      const floorTarget = allTargets.find((t) => t.target === 'floor')!;
      await allocation(floorProxy, floorTarget.url, floorTarget.headers, body, allocRequests, false);
      const floorAllocated = await allocation(floorProxy, floorTarget.url, floorTarget.headers, body, allocRequests, false);
      process.stdout.write(`The floor (bare TLS proxy), the same way: ${kb(floorAllocated.perRequest)} KB per request, ${floorAllocated.collections} collections\n`);
      figures.push(figure('chat.service.c1.allocated_per_request', allocated.perRequest / 1024, 'KB', { atMost: 20 }), figure('chat.floor.c1.allocated_per_request', floorAllocated.perRequest / 1024, 'KB'));
      // Sequential requests on one connection: the CPU figure least moved by other processes on the cores.
      figures.push(figure('chat.service.c1.alloc_run_cpu_per_request', allocated.cpuUs / 1000, 'ms'), figure('chat.service.c1.alloc_run_main_thread_cpu_per_request', allocated.mainUs / 1000, 'ms'));
    }

    // Mixed load, on each database, and through the bare proxy: its ladder is 32 upstream calls
    // in a row with no run engine (bench/bare-proxy.ts), what any gateway pays for the same load.
    const mixed = ONLY === 'alloc' ? [] : [{ label: 'embedded', url: `${service}/v1/chat/completions`, ladder: await mixedLadder(tls, service, account), auth }];
    if (process.env.BENCH_DATABASE_URL && ONLY !== 'alloc') {
      const pg = await startService(upstream, pgDataDir, adminToken, tls, { DATABASE_URL: process.env.BENCH_DATABASE_URL });
      const pgAccount = await setUpAccount(tls, pg.url, admin);
      mixed.push({ label: 'postgres', url: `${pg.url}/v1/chat/completions`, ladder: await mixedLadder(tls, pg.url, pgAccount), auth: pgAccount.auth });
    }
    if (mixed.length > 0) {
      mixed.push({ label: 'floor', url: `${floor}/v1/chat/completions`, ladder: `${floor}/ladder`, auth: { authorization: 'Bearer sk-bench-upstream-key' } });
      process.stdout.write(
        `\nMixed load: direct chat at ${MIXED_CONNECTIONS} connections, alone and beside ${MIXED_LADDERS} synchronous 32-call ladders run back to back ` +
          `(${MIXED_ROUNDS} round${MIXED_ROUNDS === 1 ? '' : 's'} of ${DURATION_S} s each, alternated and pooled; floor: the bare proxy, its ladder 32 upstream calls in a row):\n`,
      );
    }
    for (const m of mixed) {
      const { alone, loaded, ladders } = await mixedLoad(tls, m, body);
      const ratio = loaded.p99 / alone.p99;
      process.stdout.write(
        `  ${m.label.padEnd(8)}: alone p50 ${alone.p50.toFixed(3)} ms, p99 ${alone.p99.toFixed(3)} ms; beside the ladders p50 ${loaded.p50.toFixed(3)} ms, ` +
          `p99 ${loaded.p99.toFixed(3)} ms (${ratio.toFixed(2)}x), ${loaded.rps.toFixed(0)} vs ${alone.rps.toFixed(0)} req/s, ${ladders} ladders finished\n`,
      );
      figures.push(
        figure(`mixed.${m.label}.alone_p99`, alone.p99, 'ms'),
        figure(`mixed.${m.label}.loaded_p99`, loaded.p99, 'ms'),
        figure(`mixed.${m.label}.p99_ratio`, ratio, 'x', m.label === 'floor' ? undefined : { atMost: 1.5 }),
        figure(`mixed.${m.label}.ladders_finished`, ladders, 'runs'),
      );
    }
    printReport('chat', figures);
  } finally {
    await stopChildren();
    await tls.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(pgDataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    for (const child of children) child.kill('SIGKILL');
    process.exit(1);
  },
);
