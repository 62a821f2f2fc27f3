// What the benchmarks share: the child processes (the fake upstream, the service as `npm start`
// runs it), their CPU time, and a JSON call. Every child is listed in `children`, for the
// caller to stop at the end.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request, type Agent } from 'undici';

const here = path.dirname(fileURLToPath(import.meta.url));
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
export const children: ChildProcess[] = [];

/** Stops every child and waits for them. */
export async function stopChildren(): Promise<void> {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? once(c, 'exit') : null)));
}

// /proc counts CPU time in USER_HZ ticks, 1/100 s on the Linux platforms Node.js supports.
const CLOCK_TICKS = 100;

/**
 * CPU time a process has used so far, in µs, from /proc (Linux; null elsewhere). Unlike
 * latency it hardly moves when other processes share the cores, so it compares builds
 * measured on a busy machine. `mainThreadOnly` counts the thread that runs the event loop
 * only (its task id is the pid), leaving out worker threads such as the embedded database's.
 */
export function cpuTimeUs(pid: number | undefined, mainThreadOnly = false): number | null {
  if (pid === undefined) return null;
  try {
    // Fields after the command name (which may contain spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

export async function startUpstream(): Promise<string> {
  const child = fork(path.join(here, 'fake-upstream.js'), { stdio: 'inherit' });
  children.push(child);
  return `http://127.0.0.1:${await portOf(child, 'the fake upstream')}`;
}

/** How long a helper process may take to say where it listens. */
const LISTEN_TIMEOUT_MS = 30_000;

/** The port a forked helper (the fake upstream, the bare proxy) sends once it listens. */
export async function portOf(child: ChildProcess, name: string): Promise<number> {
  return (await nextMessage<{ port: number }>(child, name, LISTEN_TIMEOUT_MS)).port;
}

/**
 * The next message `child` sends over IPC; throws, naming it, when it exits first or stays
 * silent for `timeoutMs`, where waiting on the message alone would hang, or let the bench end
 * quietly with exit 0 once nothing else is left to wait for. Listening starts on the call, so
 * a caller may send its request after calling.
 */
export async function nextMessage<T>(child: ChildProcess, name: string, timeoutMs: number): Promise<T> {
  const signal = AbortSignal.timeout(timeoutMs);
  const answered = once(child, 'message', { signal }).then(([message]) => message as T);
  const exited = once(child, 'exit', { signal }).then(([code, by]) => {
    throw new Error(`${name} exited before it answered (${by ? `signal ${String(by)}` : `code ${String(code)}`})`);
  });
  try {
    return await Promise.race([answered, exited]);
  } catch (error) {
    if (signal.aborted) throw new Error(`${name} did not answer within ${timeoutMs / 1000} s`);
    throw error;
  } finally {
    // Whichever lost is still waiting: stop it, so that its rejection is not left unhandled.
    answered.catch(() => {});
    exited.catch(() => {});
  }
}

/**
 * The bare HTTPS proxy (bench/bare-proxy.ts), the floor the service is compared with, serving
 * the service's own certificate from `tlsDir` (its DATA_DIR/tls), so that both pay the same TLS.
 * `nodeArgs` as for the service (a probe to load).
 */
export async function startBareProxy(upstream: string, tlsDir: string, nodeArgs: string[] = []): Promise<{ url: string; pid: number | undefined; child: ChildProcess }> {
  const child = fork(path.join(here, 'bare-proxy.js'), [upstream, tlsDir], { stdio: 'inherit', execArgv: nodeArgs });
  children.push(child);
  return { url: `https://127.0.0.1:${await portOf(child, 'the bare proxy')}`, pid: child.pid, child };
}

/** A port nobody listens on right now (the service needs it before it can log anything). */
export async function freePort(): Promise<number> {
  const probe = createNetServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

export interface Service {
  url: string;
  pid: number | undefined;
  /** Spawn to the first healthy /healthz. */
  startMs: number;
  child: ChildProcess;
}

let traceSink: Promise<string> | null = null;

/** BENCH_TRACES=1: where the service exports its traces, an OTLP endpoint in this process that answers 200 and keeps nothing. */
function startTraceSink(): Promise<string> {
  traceSink ??= new Promise((resolve) => {
    const sink = createServer((req, res) => req.resume().on('end', () => res.end()));
    sink.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(sink.address() as AddressInfo).port}`));
    sink.unref();
  });
  return traceSink;
}

/**
 * The bundled server `npm start` runs, of this build or of BENCH_SERVICE_DIST (another build's
 * dist/, e.g. main's, to measure it with this bench); a build from before the bundle: its src/server.js.
 */
function serverScript(): string {
  const dist = process.env.BENCH_SERVICE_DIST ?? path.join(here, '..');
  const bundled = path.join(dist, 'server', 'server.js');
  return existsSync(bundled) ? bundled : path.join(dist, 'src', 'server.js');
}

/** The service as `npm start` runs it; `env` and `nodeArgs` add to its environment and command line. */
export async function startService(
  upstream: string,
  dataDir: string,
  adminToken: string,
  dispatcher: Agent,
  env: NodeJS.ProcessEnv = {},
  nodeArgs: string[] = [],
): Promise<Service> {
  const port = await freePort();
  const childEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    ...(process.env.NODE_OPTIONS ? { NODE_OPTIONS: process.env.NODE_OPTIONS } : {}),
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL,
    PROVIDER_BASE_URL_OPENAI: `${upstream}/v1`,
    ...(process.env.BENCH_METRICS === '1' ? { METRICS_TOKEN: randomBytes(24).toString('hex') } : {}),
    ...(process.env.BENCH_TRACES === '1' ? { OTEL_EXPORTER_OTLP_ENDPOINT: await startTraceSink() } : {}),
    ...env,
  };
  const spawned = performance.now();
  // The log goes to /dev/null, as a process manager would ship it away: writing costs the service, reading it would cost us.
  // The IPC channel is for a probe loaded with `nodeArgs` (bench/alloc-probe.ts); the service itself never uses it.
  // `--enable-source-maps` as `npm start` and the Docker image run it: it costs the start 60-120 ms here.
  const child = spawn(process.execPath, ['--enable-source-maps', ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), ...nodeArgs, serverScript()], {
    env: childEnv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.push(child);
  const url = `https://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited during start-up (code ${child.exitCode})`);
    try {
      const res = await request(`${url}/healthz`, { dispatcher });
      await res.body.dump();
      if (res.statusCode === 200) return { url, pid: child.pid, startMs: performance.now() - spawned, child };
    } catch {
      // not listening yet
    }
    // Often, so that the start-up figure is not rounded up to the poll.
    await sleep(10);
  }
  throw new Error('the service did not become healthy within 120 s');
}

export async function call(dispatcher: Agent, url: string, headers: Record<string, string>, body: unknown) {
  const res = await request(url, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`POST ${url}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

