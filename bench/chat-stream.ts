// `npm run bench:stream`: what the service adds to a streamed chat completion (issue 21, "Speed
// and memory"), each figure beside its goal:
// - time to first token added over streaming straight from the local upstream (p50, 1 connection),
//   with the non-streamed answer's added latency beside it;
// - relay CPU per chunk, and a 500-chunk answer's CPU streamed vs the same answer whole, beside
//   the same figures for the floor (bench/bare-proxy.ts: a bare TLS proxy piping the stream's
//   bytes unparsed), the share of that ratio no gateway on this machine can avoid;
// - 1,000 concurrent slow streams (a chunk every 100 ms) in one process: RSS growth,
//   event-loop delay p99, every stream complete.
// Separate processes as in bench/chat-completions.ts: this one (the clients), the upstream
// (bench/fake-upstream.ts, streaming mode) and the service as `npm start` runs it, with
// bench/loop-probe.ts loaded to measure its event loop and RSS from inside. BENCH_SMOKE=1: a
// short run with small numbers, to check the bench itself. BENCH_ONLY=ttft|cpu|slow: that part
// alone (to profile it: BENCH_NODE_ARGS=--cpu-prof). The last line is the figures as JSON.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { figure, printReport, SMOKE, type Figure } from './report.js';
import { call, cpuTimeUs, startBareProxy, startService, startUpstream, stopChildren } from './service-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// A smoke run's CPU blocks still span several of /proc's 10 ms ticks: 20 whole answers could read
// 0 µs, and the streamed-over-whole ratio then was no number and failed the run.
const SIZES = SMOKE
  ? { ttftWarmUp: 20, ttftRequests: 30, cpuWarmUp: 10, cpuRounds: 2, cpuBlock: 50, slowStreams: 100, slowChunks: 10 }
  : { ttftWarmUp: 1000, ttftRequests: 500, cpuWarmUp: 1000, cpuRounds: 5, cpuBlock: 100, slowStreams: 1000, slowChunks: 50 };
const LONG_CHUNKS = 500;
const SLOW_INTERVAL_MS = 100;
const SLOW_OPEN_MS = 1_000;
const OPEN_STEP_MS = 10;
/** The probe's timer resolution: its histogram holds whole intervals, so this is taken off. */
const PROBE_RESOLUTION_MS = 10;

const ONLY = process.env.BENCH_ONLY;
const runs = (part: 'ttft' | 'cpu' | 'slow') => ONLY === undefined || ONLY === part;

const GOALS = { ttftAddedP50Ms: 0.5, relayCpuPerChunkUs: 15, cpuRatio: 2, rssGrowthMb: 150, loopDelayP99Ms: 20 };

interface Target {
  url: string;
  headers: Record<string, string>;
}

const signed = (us: number) => `${us >= 0 ? '+' : ''}${us.toFixed(0)}`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * One request: ms to the first content piece (streamed) or to the whole answer, the content
 * pieces seen, and whether a stream ended with [DONE].
 */
async function timed(dispatcher: Agent, target: Target, content: string, stream: boolean, onFirst?: () => void) {
  const started = performance.now();
  const res = await request(target.url, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json', ...target.headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...(stream ? { stream: true } : {}) }),
  });
  if (res.statusCode !== 200) throw new Error(`${target.url}: ${res.statusCode} ${await res.body.text()}`);
  let firstMs: number | null = null;
  let text = '';
  for await (const part of res.body) {
    text += (part as Buffer).toString('utf8');
    if (firstMs === null && (!stream || text.includes('"content":"tok'))) {
      firstMs = performance.now() - started;
      onFirst?.();
    }
  }
  const pieces = stream ? text.split('"content":"tok ').length - 1 : 0;
  return { firstMs: stream ? firstMs ?? Number.NaN : performance.now() - started, pieces, done: text.endsWith('data: [DONE]\n\n') };
}

/** The service's event-loop delay p99 and RSS since the last probe (bench/loop-probe.ts). */
async function probe(pid: number, file: string): Promise<{ p99Ms: number; maxMs: number; rss: number; peakRss: number }> {
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 100; i++) {
    await sleep(20);
    try {
      const read = JSON.parse(readFileSync(file, 'utf8')) as { p99Ms: number; maxMs: number; rss: number; peakRss: number };
      return { ...read, p99Ms: Math.max(0, read.p99Ms - PROBE_RESOLUTION_MS), maxMs: Math.max(0, read.maxMs - PROBE_RESOLUTION_MS) };
    } catch {
      // not written yet
    }
  }
  throw new Error('the service did not answer the probe');
}

async function ttft(tls: Agent, plain: Agent, direct: Target, service: Target) {
  const runs = { direct: [] as number[], service: [] as number[], directWhole: [] as number[], serviceWhole: [] as number[] };
  // Warm the connections and the JIT first, on every kind of request measured below: a service
  // timed after a few dozen requests is still partly unoptimised code (bench/chat-completions.ts
  // runs seconds of load before it measures; 50 streams here made both added figures ~0.1 ms higher).
  for (let i = 0; i < SIZES.ttftWarmUp; i++) {
    await timed(plain, direct, 'chunks=3', true);
    await timed(tls, service, 'chunks=3', true);
    await timed(plain, direct, 'chunks=3', false);
    await timed(tls, service, 'chunks=3', false);
  }
  // Interleaved, so that both see the same load from the rest of the machine.
  for (let i = 0; i < SIZES.ttftRequests; i++) {
    runs.direct.push((await timed(plain, direct, 'chunks=3', true)).firstMs);
    runs.service.push((await timed(tls, service, 'chunks=3', true)).firstMs);
    runs.directWhole.push((await timed(plain, direct, 'chunks=3', false)).firstMs);
    runs.serviceWhole.push((await timed(tls, service, 'chunks=3', false)).firstMs);
  }
  return {
    directP50Ms: median(runs.direct),
    serviceP50Ms: median(runs.service),
    addedP50Ms: median(runs.service) - median(runs.direct),
    wholeAddedP50Ms: median(runs.serviceWhole) - median(runs.directWhole),
  };
}

/** The kinds of request the CPU figures compare: the same answer streamed and whole, and a one-chunk stream. */
const CPU_KINDS = [
  { name: 'oneChunk', content: 'chunks=1', stream: true },
  { name: 'longStreamed', content: `chunks=${LONG_CHUNKS}`, stream: true },
  { name: 'longWhole', content: `chunks=${LONG_CHUNKS}`, stream: false },
] as const;

/**
 * CPU µs the service spends per request of each kind (sequential requests, one connection), once
 * warm, in alternating blocks. A new process's requests cost 3-4x more over its first few
 * thousand (code compiled on V8's background threads, a young generation still growing: whole
 * answers read 1,070, 610, 410, 350, 280 µs over five blocks of 1,000), so each kind is warmed
 * 1,000 times, and the kinds take turns so that none is measured in a warmer process.
 */
async function cpuPerRequest(tls: Agent, service: Target, pid: number): Promise<Record<(typeof CPU_KINDS)[number]['name'], number>> {
  for (const kind of CPU_KINDS) for (let i = 0; i < SIZES.cpuWarmUp; i++) await timed(tls, service, kind.content, kind.stream);
  const spent = { oneChunk: 0, longStreamed: 0, longWhole: 0 };
  for (let round = 0; round < SIZES.cpuRounds; round++) {
    for (const kind of CPU_KINDS) {
      const before = cpuTimeUs(pid)!;
      for (let i = 0; i < SIZES.cpuBlock; i++) {
        const answer = await timed(tls, service, kind.content, kind.stream);
        if (kind.stream && !answer.done) throw new Error('a stream did not end with [DONE]');
      }
      spent[kind.name] += cpuTimeUs(pid)! - before;
    }
  }
  const requests = SIZES.cpuRounds * SIZES.cpuBlock;
  return { oneChunk: spent.oneChunk / requests, longStreamed: spent.longStreamed / requests, longWhole: spent.longWhole / requests };
}

async function relayCpu(tls: Agent, service: Target, pid: number) {
  const { oneChunk, longStreamed, longWhole } = await cpuPerRequest(tls, service, pid);
  return {
    streamedCpuUs: longStreamed,
    wholeCpuUs: longWhole,
    ratio: longStreamed / longWhole,
    perChunkUs: (longStreamed - oneChunk) / (LONG_CHUNKS - 1),
  };
}

/**
 * Many streams at once, each a chunk every 100 ms, opened over the first second (10 every 10 ms
 * for 1,000). The event loop is measured apart in two phases: while they open (a storm of TLS
 * handshakes and requests) and once every stream has its first chunk (the 1,000 concurrent
 * streams themselves, which the goal is about).
 */
async function slowStreams(service: Target, pid: number, probeFile: string) {
  const clients = new Agent({ connect: { rejectUnauthorized: false }, keepAliveTimeout: 1_000 });
  const start = await probe(pid, probeFile);
  const cpuBefore = cpuTimeUs(pid)!;
  const content = `chunks=${SIZES.slowChunks} interval=${SLOW_INTERVAL_MS}`;
  const streams: Array<Promise<{ pieces: number; done: boolean }>> = [];
  /** Why streams failed, by message: a stream that fails is counted incomplete, and its reason shown. */
  const failures = new Map<string, number>();
  let settled = 0;
  let allFlowing: () => void = () => {};
  const flowing = new Promise<void>((resolve) => (allFlowing = resolve));
  /** A stream is counted once: at its first chunk, or when it fails before it. */
  const open = () => {
    let counted = false;
    const count = () => {
      if (counted) return;
      counted = true;
      if (++settled === SIZES.slowStreams) allFlowing();
    };
    return timed(clients, service, content, true, count).catch((error: unknown) => {
      const reason = error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 120) : String(error);
      failures.set(reason, (failures.get(reason) ?? 0) + 1);
      count();
      return { pieces: 0, done: false, firstMs: 0 };
    });
  };
  const opened = performance.now();
  // Opened evenly over one chunk interval, as independent clients arrive: opened in bursts, the
  // streams of a burst would also get their chunks in the same millisecond for the whole run.
  while (streams.length < SIZES.slowStreams) {
    const due = Math.min(SIZES.slowStreams, Math.ceil(((performance.now() - opened) / SLOW_OPEN_MS) * SIZES.slowStreams));
    while (streams.length < due) streams.push(open());
    await sleep(OPEN_STEP_MS);
  }
  await flowing;
  const opening = await probe(pid, probeFile);
  const openingSeconds = (performance.now() - opened) / 1000;
  const results = await Promise.all(streams);
  const seconds = (performance.now() - opened) / 1000;
  const end = await probe(pid, probeFile);
  // The service's busy share of the run: near 1 means it had no CPU to spare (the machine, or its cost per chunk).
  const busy = (cpuTimeUs(pid)! - cpuBefore) / 1e6 / seconds;
  await clients.close();
  const complete = results.filter((r) => r.done && r.pieces === SIZES.slowChunks).length;
  for (const [reason, count] of failures) process.stdout.write(`  ${count} streams failed: ${reason}\n`);
  return {
    streams: SIZES.slowStreams,
    complete,
    seconds,
    openingSeconds,
    busy,
    rssGrowthMb: (Math.max(opening.peakRss, end.peakRss) - start.rss) / 2 ** 20,
    loopDelayP99Ms: end.p99Ms,
    loopDelayMaxMs: end.maxMs,
    openingLoopDelayP99Ms: opening.p99Ms,
    openingLoopDelayMaxMs: opening.maxMs,
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-bench-stream-'));
  const probeFile = path.join(dataDir, 'probe.json');
  const adminToken = randomBytes(24).toString('hex');
  const tls = new Agent({ connect: { rejectUnauthorized: false } });
  const plain = new Agent();
  try {
    const upstream = await startUpstream();
    process.stdout.write(`upstream  ${upstream}\nstarting the service (embedded database in ${dataDir}) ...\n`);
    const started = await startService(upstream, dataDir, adminToken, tls, { BENCH_PROBE_FILE: probeFile }, ['--import', path.join(here, 'loop-probe.js')]);
    const pid = started.pid!;
    const admin = { authorization: `Bearer ${adminToken}` };
    const username = `bench-${randomBytes(3).toString('hex')}`;
    await call(tls, `${started.url}/v1/admin/accounts`, admin, { username });
    const { key } = (await call(tls, `${started.url}/v1/admin/accounts/${username}/api-keys`, admin, {})) as { key: string };
    await call(tls, `${started.url}/v1/providers`, { authorization: `Bearer ${key}` }, { provider: 'openai', api_key: 'sk-bench-upstream-key' });
    const direct: Target = { url: `${upstream}/v1/chat/completions`, headers: { authorization: 'Bearer sk-bench-upstream-key' } };
    const service: Target = { url: `${started.url}/v1/chat/completions`, headers: { authorization: `Bearer ${key}` } };
    process.stdout.write(`service   ${started.url}${SMOKE ? ' (smoke run: small numbers)' : ''}\n\n`);

    const figures: Figure[] = [];
    if (runs('ttft')) {
      const first = await ttft(tls, plain, direct, service);
      process.stdout.write(
        `time to first token, 1 connection, ${SIZES.ttftRequests} requests: direct p50 ${first.directP50Ms.toFixed(3)} ms, service p50 ${first.serviceP50Ms.toFixed(3)} ms\n` +
          `  added p50 ${first.addedP50Ms.toFixed(3)} ms (goal <= ${GOALS.ttftAddedP50Ms} ms); a whole answer's added p50: ${first.wholeAddedP50Ms.toFixed(3)} ms\n`,
      );
      figures.push(figure('ttft_added_p50', first.addedP50Ms, 'ms', { atMost: GOALS.ttftAddedP50Ms }), figure('whole_answer_added_p50', first.wholeAddedP50Ms, 'ms'));
    }
    if (runs('cpu')) {
      const cpu = await relayCpu(tls, service, pid);
      const bare = await startBareProxy(upstream, path.join(dataDir, 'tls'));
      const floor = await relayCpu(tls, { url: `${bare.url}/v1/chat/completions`, headers: direct.headers }, bare.pid!);
      process.stdout.write(
        `CPU, ${SIZES.cpuRounds * SIZES.cpuBlock} requests each (${SIZES.cpuRounds} alternated blocks): ${LONG_CHUNKS}-chunk answer streamed ${cpu.streamedCpuUs.toFixed(0)} µs, whole ${cpu.wholeCpuUs.toFixed(0)} µs: ` +
          `${cpu.ratio.toFixed(2)}x (goal <= ${GOALS.cpuRatio}x)\n  relay CPU per chunk ${cpu.perChunkUs.toFixed(2)} µs (goal <= ${GOALS.relayCpuPerChunkUs} µs)\n` +
          `  floor (bare TLS proxy, the stream piped unparsed): streamed ${floor.streamedCpuUs.toFixed(0)} µs, whole ${floor.wholeCpuUs.toFixed(0)} µs: ${floor.ratio.toFixed(2)}x; ` +
          `${floor.perChunkUs.toFixed(2)} µs per chunk\n  the service over the floor: streamed ${signed(cpu.streamedCpuUs - floor.streamedCpuUs)} µs, whole ${signed(cpu.wholeCpuUs - floor.wholeCpuUs)} µs\n`,
      );
      figures.push(
        figure('relay_cpu_per_chunk', cpu.perChunkUs, 'us', { atMost: GOALS.relayCpuPerChunkUs }),
        figure('streamed_vs_whole_cpu', cpu.ratio, 'x', { atMost: GOALS.cpuRatio }),
        figure('floor_relay_cpu_per_chunk', floor.perChunkUs, 'us'),
        figure('floor_streamed_vs_whole_cpu', floor.ratio, 'x'),
      );
    }
    if (runs('slow')) {
      const slow = await slowStreams(service, pid, probeFile);
      process.stdout.write(
        `${slow.streams} concurrent streams, a chunk every ${SLOW_INTERVAL_MS} ms, ${SIZES.slowChunks} chunks each (${slow.seconds.toFixed(1)} s):\n` +
          `  complete ${slow.complete}/${slow.streams} (goal: all), RSS growth ${slow.rssGrowthMb.toFixed(1)} MB (goal <= ${GOALS.rssGrowthMb} MB), ` +
          `event-loop delay p99 with every stream open ${slow.loopDelayP99Ms.toFixed(2)} ms (goal <= ${GOALS.loopDelayP99Ms} ms; max ${slow.loopDelayMaxMs.toFixed(1)} ms)\n` +
          `  while they opened (${slow.openingSeconds.toFixed(1)} s): event-loop delay p99 ${slow.openingLoopDelayP99Ms.toFixed(2)} ms (max ${slow.openingLoopDelayMaxMs.toFixed(1)} ms)\n` +
          `  the service's CPU: ${(slow.busy * 100).toFixed(0)}% of one core over the run\n`,
      );
      figures.push(
        figure('slow_streams_complete', slow.complete / slow.streams, 'fraction', { atLeast: 1 }),
        figure('slow_streams_rss_growth', slow.rssGrowthMb, 'MB', { atMost: GOALS.rssGrowthMb }),
        figure('slow_streams_loop_delay_p99', slow.loopDelayP99Ms, 'ms', { atMost: GOALS.loopDelayP99Ms }),
        figure('slow_streams_opening_loop_delay_p99', slow.openingLoopDelayP99Ms, 'ms'),
        figure('slow_streams_service_cpu_share', slow.busy, 'fraction'),
      );
    }
    printReport('chat-stream', figures);
  } finally {
    await stopChildren();
    await tls.close();
    await plain.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
