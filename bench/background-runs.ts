// `npm run bench:runs`: what the background path costs. Against a local upstream that answers
// at once (its own process), on the embedded database and, when BENCH_DATABASE_URL is set, on
// PostgreSQL too:
//   1. per model call: 32-call ladders, sequential (one call after another) and fan-out (31
//      calls side by side, then one), run by the interpreter alone (no database), as
//      synchronous runs (row, lease, checkpoints, events) and as background runs; and a one-call
//      ladder run synchronously against the same call made directly (what a run costs on its own);
//   2. pickup: pending insert to `running` on an idle process (database clock);
//   3. throughput: one-call instances completed per second by one process.
// CPU time is given for the whole process and for its main thread alone: the main thread's is
// what stalls every other request (the embedded database runs on a thread of its own); and the
// journal's checkpoint writes per run, a count that load does not move.
// The service runs in this process (startServer), so the bench can insert pending rows into
// the embedded database it holds. BENCH_RUNS (default 30, timed in three rounds of the three
// modes in turn, after BENCH_WARMUP runs of every mode and shape, default 20), BENCH_INSTANCES
// (default 2000); WORKER_CONCURRENCY, when set, replaces the default for the throughput figure; BENCH_SMOKE=1
// runs a few of each (CI). The last line is the JSON report (bench/report.ts).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import type { LadderConfig } from '../src/ladders/language/config.js';
import { runLadder } from '../src/ladders/engine/interpreter.js';
import { startServer, type RunningServer } from '../src/server.js';
import { EVENTS_CHANNEL } from '../src/services/instance-events.js';
import { figure, printReport, SMOKE, type Figure } from './report.js';
import { cpuTimeUs, startUpstream, stopChildren } from './service-process.js';

const RUNS = Number(process.env.BENCH_RUNS ?? (SMOKE ? 3 : 30));
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? (SMOKE ? 100 : 2000));
/** Runs of every mode and shape before any is timed (BENCH_WARMUP), and the rounds the timed runs are taken in. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? (SMOKE ? 1 : 20));
const ROUNDS = SMOKE ? 1 : 3;
/** One-call ladders and direct calls timed side by side (in ROUNDS rounds). */
const SINGLE_CALLS = SMOKE ? 30 : 600;
/** Calls side by side in a fan-out step: the run's cap must let them all go at once. */
const FAN_OUT = 31;

const sequential: LadderConfig = {
  name: 'Thirty-two calls in a row',
  exit: 'a',
  steps: [{ id: 'a', name: 'A', type: 'sequential', nodes: 32, fields: [{ name: 'Q', type: 'text', from: 'input.context' }], systemPrompt: 'Go on.' }],
};
const fanOut: LadderConfig = {
  name: 'Thirty-one calls side by side, then one',
  exit: 'b',
  steps: [
    { id: 'a', name: 'A', type: 'normal', nodes: FAN_OUT, fields: [{ name: 'Q', type: 'text', from: 'input.context' }], systemPrompt: 'Think.' },
    { id: 'b', name: 'B', type: 'normal', fields: [{ name: 'A', type: 'ingest', from: { stepId: 'a' } }], systemPrompt: 'Sum up.' },
  ],
};
const shapes = { sequential, fanout: fanOut } as const;
type Shape = keyof typeof shapes;
const SHAPES = Object.keys(shapes) as Shape[];
const single: LadderConfig = {
  name: 'One call',
  exit: 'a',
  steps: [{ id: 'a', name: 'A', type: 'normal', fields: [{ name: 'Q', type: 'text', from: 'input.context' }], systemPrompt: 'Answer.' }],
};

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};
const signed = (ms: number) => `${ms < 0 ? '-' : '+'}${Math.abs(ms).toFixed(3)}`;
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(dispatcher: Agent, url: string, headers: Record<string, string>, body: unknown, method = 'POST') {
  const res = await request(url, { method: method as 'POST', dispatcher, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function benchDatabase(label: string, prefix: string, upstream: string, databaseUrl: string | null, figures: Figure[]): Promise<string[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ladder-bench-runs-'));
  const adminToken = randomBytes(24).toString('hex');
  const config = loadConfig({
    PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', PROVIDER_BASE_URL_OPENAI: `${upstream}/v1`,
    LADDER_MAX_CONCURRENT_CALLS: String(FAN_OUT + 1), ...(process.env.WORKER_CONCURRENCY ? { WORKER_CONCURRENCY: process.env.WORKER_CONCURRENCY } : {}), ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const tls = new Agent({ connect: { rejectUnauthorized: false } });
  let server: RunningServer | null = null;
  const lines: string[] = [];
  try {
    server = await startServer(config, { logStream: { write: () => true } as never });
    const { app, url: serviceUrl } = server;
    const db = app.database;
    // The journal's checkpoint writes, counted on the service's own client: a count, steady under load.
    let journalWrites = 0;
    const relaxed = db.queryRelaxed.bind(db);
    db.queryRelaxed = (name, text, params) => {
      if (name === 'ladder_journal_flush') journalWrites += 1;
      return relaxed(name, text, params);
    };
    const admin = { authorization: `Bearer ${adminToken}` };
    const username = `bench-${randomBytes(3).toString('hex')}`;
    const account = (await call(tls, `${serviceUrl}/v1/admin/accounts`, admin, { username })) as { id: string };
    const { key } = (await call(tls, `${serviceUrl}/v1/admin/accounts/${username}/api-keys`, admin, {})) as { key: string };
    const auth = { authorization: `Bearer ${key}` };
    await call(tls, `${serviceUrl}/v1/providers`, auth, { provider: 'openai', api_key: 'sk-bench-upstream-key' });
    const ladders: Record<string, string> = {};
    for (const [slug, ladder] of [['sequential', sequential], ['fanout', fanOut], ['single', single]] as const) {
      ladders[slug] = ((await call(tls, `${serviceUrl}/v1/${username}/${slug}`, auth, { config: ladder }, 'PUT')) as { id: string }).id;
    }
    const insert = async (slug: string, input: string) => {
      const [row] = await db.query<{ id: string }>(
        `insert into instances (ladder_id, ladder_version, author, slug, account_id, mode, model, input, knobs, status)
         values ($1, 1, $2, $3, $4, 'async', 'gpt-4o-mini', $5, '{}', 'pending') returning id`,
        [ladders[slug], username, slug, account.id, input],
      );
      return row!.id;
    };
    const timings = async (ids: string[]) =>
      db.query<{ run_ms: number; pickup_ms: number }>(
        `select extract(epoch from finished_at - started_at) * 1000 as run_ms, extract(epoch from started_at - created_at) * 1000 as pickup_ms
         from instances where id = any($1::uuid[]) and status = 'completed'`,
        [ids],
      );
    // Every run's end is announced on EVENTS_CHANNEL with its id, so the bench waits on those
    // notices. Polling the 2,000 ids every 20 ms cost the embedded database's one thread 26 ms a
    // poll, half of its time, and the throughput figure with it. A slow poll catches a missed notice.
    const untilDone = async (ids: string[]) => {
      const open = new Set(ids);
      let wake = () => {};
      const unlisten = await db.listen(EVENTS_CHANNEL, (id) => {
        if (open.delete(id) && open.size === 0) wake();
      });
      try {
        while (open.size > 0) {
          const [row] = await db.query<{ n: number }>(`select count(*)::int as n from instances where id = any($1::uuid[]) and status in ('pending', 'running')`, [[...open]]);
          if (row!.n === 0) return;
          await new Promise<void>((resolve) => {
            if (open.size === 0) return resolve();
            wake = resolve;
            setTimeout(resolve, 1000).unref();
          });
        }
      } finally {
        await unlisten();
      }
    };

    // 1. Per model call, for each shape: the interpreter alone, a synchronous run, a background run.
    const connections = await app.connections.forRouting(account.id);
    const perCall = (ms: number[]) => mean(ms) / 32;
    const limits = { maxNodesPerStep: 32, maxModelCallsPerRun: 500, maxRecursionDepth: 10, maxRunMs: 60_000, maxConcurrentCalls: FAN_OUT + 1, maxSpendNanos: 50_000_000_000 };
    /** One run of each mode: the interpreter's time in ms, and the instance ids of the other two. */
    const runs = {
      bare: async (shape: Shape, input: string) => {
        const started = performance.now();
        await runLadder({
          config: shapes[shape], model: 'gpt-4o-mini', input, knobs: {}, limits,
          call: (req, signal) => app.providerRouter.call(req, connections, signal),
        });
        return performance.now() - started;
      },
      sync: async (shape: Shape, input: string) => {
        const answer = await call(tls, `${serviceUrl}/v1/${username}/${shape}/chat/completions`, auth, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: input }] });
        return String(answer.id).slice('ldr-'.length); // the completion's id is `ldr-<instance id>`
      },
      async: async (shape: Shape, input: string) => {
        const id = await insert(shape, input);
        await app.runNotices.pendingCreated();
        await untilDone([id]);
        return id;
      },
    };
    // Every mode of both shapes first: timed cold, the first mode read up to 3x slower than the
    // others (V8 still optimising the interpreter, the router and undici), which flattered
    // what the database adds over it.
    for (let i = 0; i < WARMUP; i++) {
      for (const shape of SHAPES) {
        await runs.bare(shape, `warm-up ${shape} ${i}`);
        await runs.sync(shape, `warm-up ${shape} ${i}`);
        await runs.async(shape, `warm-up ${shape} ${i}`);
      }
    }
    lines.push(`${label}: 32-call ladders, ${RUNS} runs each, mean per model call:`);
    for (const shape of SHAPES) {
      // CPU time of this process (service and load alike) per call: steadier than latency on a shared machine.
      const cpu = { bare: 0, sync: 0, async: 0 };
      const writes = { sync: 0, async: 0 };
      const main = { bare: 0, sync: 0, async: 0 };
      const mainCpuMs = () => (cpuTimeUs(process.pid, true) ?? Number.NaN) / 1000;
      const cpuMs = (since: NodeJS.CpuUsage) => {
        const used = process.cpuUsage(since);
        return (used.user + used.system) / 1000;
      };
      const bare: number[] = [];
      const syncIds: string[] = [];
      const asyncIds: string[] = [];
      /** Runs `count` runs of one mode, adding their CPU time and checkpoint writes to its figures. */
      const block = async (mode: keyof typeof cpu, count: number, run: (i: number) => Promise<void>) => {
        const [cpuStart, mainStart, writesStart] = [process.cpuUsage(), mainCpuMs(), journalWrites];
        for (let i = 0; i < count; i++) await run(i);
        cpu[mode] += cpuMs(cpuStart);
        main[mode] += mainCpuMs() - mainStart;
        if (mode !== 'bare') writes[mode] += (journalWrites - writesStart) / RUNS;
      };
      // The modes take turns in rounds, so that the machine's drift weighs on each alike.
      for (let round = 0, done = 0; round < ROUNDS; round++) {
        const count = Math.min(Math.ceil(RUNS / ROUNDS), RUNS - done);
        await block('bare', count, async (i) => void bare.push(await runs.bare(shape, `bare ${shape} ${done + i}`)));
        await block('sync', count, async (i) => void syncIds.push(await runs.sync(shape, `sync ${shape} ${done + i}`)));
        await block('async', count, async (i) => void asyncIds.push(await runs.async(shape, `async ${shape} ${done + i}`)));
        done += count;
      }
      const cpuPerCall = (ms: number) => ms / RUNS / 32;
      const syncMs = (await timings(syncIds)).map((r) => Number(r.run_ms));
      const asyncMs = (await timings(asyncIds)).map((r) => Number(r.run_ms));
      if (syncMs.length !== RUNS || asyncMs.length !== RUNS) throw new Error(`${label} ${shape}: not every run completed`);
      const [b, sy, as] = [perCall(bare), perCall(syncMs), perCall(asyncMs)];
      lines.push(
        `  ${shape}: interpreter alone (no database)      ${b.toFixed(3)} ms`,
        `  ${shape}: synchronous run (lease, checkpoints) ${sy.toFixed(3)} ms  (${signed(sy - b)} ms over the interpreter alone)`,
        `  ${shape}: background run (claimed by a worker) ${as.toFixed(3)} ms  (${signed(as - sy)} ms over synchronous, ${signed(as - b)} ms over the interpreter alone)`,
        `  ${shape}: CPU per call (this process): interpreter ${cpuPerCall(cpu.bare).toFixed(3)} ms, synchronous ${cpuPerCall(cpu.sync).toFixed(3)} ms, background ${cpuPerCall(cpu.async).toFixed(3)} ms`,
        `  ${shape}: of it on the main thread: interpreter ${cpuPerCall(main.bare).toFixed(3)} ms, synchronous ${cpuPerCall(main.sync).toFixed(3)} ms, background ${cpuPerCall(main.async).toFixed(3)} ms`,
        `  ${shape}: checkpoint writes per 32-call run: synchronous ${writes.sync.toFixed(1)}, background ${writes.async.toFixed(1)}`,
      );
      figures.push(
        figure(`${prefix}.${shape}.interpreter_per_call`, b, 'ms'),
        figure(`${prefix}.${shape}.sync_added_per_call`, sy - b, 'ms', { atMost: 0.5 }),
        figure(`${prefix}.${shape}.async_added_per_call_over_sync`, as - sy, 'ms', { atMost: 0.3 }),
        figure(`${prefix}.${shape}.cpu_per_call.interpreter`, cpuPerCall(cpu.bare), 'ms'),
        figure(`${prefix}.${shape}.cpu_per_call.sync`, cpuPerCall(cpu.sync), 'ms'),
        figure(`${prefix}.${shape}.cpu_per_call.async`, cpuPerCall(cpu.async), 'ms'),
        figure(`${prefix}.${shape}.main_thread_cpu_per_call.interpreter`, cpuPerCall(main.bare), 'ms'),
        figure(`${prefix}.${shape}.main_thread_cpu_per_call.sync`, cpuPerCall(main.sync), 'ms'),
        figure(`${prefix}.${shape}.main_thread_cpu_per_call.async`, cpuPerCall(main.async), 'ms'),
        figure(`${prefix}.${shape}.checkpoint_writes_per_run.sync`, writes.sync, 'statements'),
        figure(`${prefix}.${shape}.checkpoint_writes_per_run.async`, writes.async, 'statements'),
      );
    }

    // 1b. A one-call ladder against the same call made directly: what a run costs on its own
    // (the ladder's lookup, its row, its outcome), which the per-call figures above spread over 32 calls.
    {
      const body = (input: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: input }] });
      const direct = (input: string) => call(tls, `${serviceUrl}/v1/chat/completions`, auth, body(input));
      const ladder = (input: string) => call(tls, `${serviceUrl}/v1/${username}/single/chat/completions`, auth, body(input));
      for (let i = 0; i < WARMUP * 10; i++) {
        await direct(`warm-up ${i}`);
        await ladder(`warm-up ${i}`);
      }
      const wall = { direct: 0, ladder: 0 };
      const main = { direct: 0, ladder: 0 };
      const count = SINGLE_CALLS / ROUNDS;
      for (let round = 0; round < ROUNDS; round++) {
        for (const [mode, send] of [['direct', direct], ['ladder', ladder]] as const) {
          const [started, mainStart] = [performance.now(), cpuTimeUs(process.pid, true) ?? Number.NaN];
          for (let i = 0; i < count; i++) await send(`${mode} ${round} ${i}`);
          wall[mode] += performance.now() - started;
          main[mode] += ((cpuTimeUs(process.pid, true) ?? Number.NaN) - mainStart) / 1000;
        }
      }
      const per = (ms: number) => ms / (count * ROUNDS);
      lines.push(
        `  one-call ladder over the same call direct, ${count * ROUNDS} each: ${per(wall.ladder).toFixed(3)} / ${per(wall.direct).toFixed(3)} ms a request ` +
          `(${signed(per(wall.ladder - wall.direct))} ms), main thread ${per(main.ladder).toFixed(3)} / ${per(main.direct).toFixed(3)} ms (${signed(per(main.ladder - main.direct))} ms)`,
      );
      figures.push(
        figure(`${prefix}.one_call.direct_ms`, per(wall.direct), 'ms'),
        figure(`${prefix}.one_call.sync_ladder_ms`, per(wall.ladder), 'ms'),
        figure(`${prefix}.one_call.sync_added_ms`, per(wall.ladder - wall.direct), 'ms'),
        figure(`${prefix}.one_call.sync_added_main_thread_cpu_ms`, per(main.ladder - main.direct), 'ms'),
      );
    }

    // 2. Pickup on an idle process.
    const pickIds: string[] = [];
    for (let i = 0; i < RUNS * 2; i++) {
      await sleep(SMOKE ? 5 : 20);
      const id = await insert('single', `pickup ${i}`);
      await app.runNotices.pendingCreated();
      await untilDone([id]);
      pickIds.push(id);
    }
    const pickups = (await timings(pickIds)).map((r) => Number(r.pickup_ms));
    lines.push(`  pickup, pending insert to running (idle process, ${pickups.length} instances): p50 ${percentile(pickups, 50).toFixed(1)} ms, p99 ${percentile(pickups, 99).toFixed(1)} ms`);
    figures.push(figure(`${prefix}.pickup_p50`, percentile(pickups, 50), 'ms', { atMost: 20 }), figure(`${prefix}.pickup_p99`, percentile(pickups, 99), 'ms'));

    // 3. Throughput.
    const bulk: string[] = [];
    await app.workerPool.drain(0).catch(() => {});
    for (let i = 0; i < INSTANCES; i++) bulk.push(await insert('single', `bulk ${i}`));
    const worker = await startServer({ ...config, databaseUrl: config.databaseUrl, port: 0 }, { logStream: { write: () => true } as never, database: db });
    const started = performance.now();
    await worker.app.runNotices.pendingCreated();
    await untilDone(bulk);
    const seconds = (performance.now() - started) / 1000;
    await worker.close();
    lines.push(`  throughput: ${INSTANCES} one-call instances in ${seconds.toFixed(2)} s = ${(INSTANCES / seconds).toFixed(0)} per second (one process, WORKER_CONCURRENCY=${config.worker.concurrency})`);
    figures.push(figure(`${prefix}.instances_per_second`, INSTANCES / seconds, '1/s', { atLeast: databaseUrl ? 500 : 300 }));
  } finally {
    await server?.close();
    await tls.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return lines;
}

async function main(): Promise<void> {
  try {
    const upstream = await startUpstream();
    const figures: Figure[] = [];
    const out = [...(await benchDatabase('embedded database (PGlite)', 'embedded', upstream, null, figures))];
    if (process.env.BENCH_DATABASE_URL) out.push(...(await benchDatabase('PostgreSQL', 'postgres', upstream, process.env.BENCH_DATABASE_URL, figures)));
    process.stdout.write(`\n${out.join('\n')}\n`);
    printReport('runs', figures);
  } finally {
    await stopChildren();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
