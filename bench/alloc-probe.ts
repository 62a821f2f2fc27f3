// Loaded into the service by bench/chat-completions.ts (`node --import`): what the process
// allocates on the V8 heap, measured inside it. The bench sends `{ probe: 'start' }` over the
// IPC channel before a run and `{ probe: 'stop' }` after it, and gets back the bytes allocated
// in between and, when asked with `sample: true`, the heaviest allocating functions.
//
// Bytes allocated come from the GC profiler: each collection reports the heap's used size
// before and after, so the allocation between two collections is the next one's `before`
// minus the last one's `after`; exact up to what a collection frees of objects made before
// the run. The breakdown comes from V8's sampling heap profiler told to keep the samples of
// objects already collected (otherwise it shows only what is still alive), so it reports
// where garbage is made; a sample every 1 KiB or so gives a few thousand samples per run.
// With BENCH_HEAP_PROFILE=<file> the whole sampled profile is also written there, for Chrome
// DevTools' Memory tab (load it as a .heapprofile) to show by call tree.
import { writeFileSync } from 'node:fs';
import type { Session } from 'node:inspector/promises';
import v8 from 'node:v8';

export interface ProbeStart {
  probe: 'start';
  /** Also run the sampling heap profiler for the breakdown by function (slower). */
  sample: boolean;
}

export interface Allocator {
  /** `name file:line`, the function the samples were taken in. */
  at: string;
  bytes: number;
}

export interface ProbeResult {
  probe: 'stopped';
  bytes: number;
  collections: number;
  /** Sampled bytes by allocating function, heaviest first; empty unless sampled. */
  top: Allocator[];
  sampledBytes: number;
}

/** What the probe answers when it could not do what it was asked (the bench then stops with this message). */
export interface ProbeFailure {
  probe: 'failed';
  error: string;
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const SAMPLING_INTERVAL = 1024;
const TOP = 25;

let gc: v8.GCProfiler | null = null;
let usedAtStart = 0;
let session: Session | null = null;

async function start(message: ProbeStart): Promise<void> {
  if (message.sample) {
    // Imported here, so that the probe adds nothing to the start-up the bench times.
    const { Session } = await import('node:inspector/promises');
    session = new Session();
    session.connect();
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: SAMPLING_INTERVAL,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as object as Parameters<Session['post']>[1]);
  }
  gc = new v8.GCProfiler();
  usedAtStart = v8.getHeapStatistics().used_heap_size;
  gc.start();
}

async function stop(): Promise<ProbeResult> {
  const usedAtEnd = v8.getHeapStatistics().used_heap_size;
  const { statistics } = gc!.stop();
  gc = null;
  let bytes = 0;
  let after = usedAtStart;
  for (const s of statistics) {
    bytes += s.beforeGC.heapStatistics.usedHeapSize - after;
    after = s.afterGC.heapStatistics.usedHeapSize;
  }
  bytes += usedAtEnd - after;
  let top: Allocator[] = [];
  let sampledBytes = 0;
  if (session) {
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
    session.disconnect();
    session = null;
    if (process.env.BENCH_HEAP_PROFILE) writeFileSync(process.env.BENCH_HEAP_PROFILE, JSON.stringify(profile));
    const byFunction = new Map<string, number>();
    const walk = (node: ProfileNode) => {
      if (node.selfSize > 0) {
        const { functionName, url, lineNumber } = node.callFrame;
        const at = `${functionName || '(anonymous)'} ${url.replace(/^.*\/node_modules\//, '').replace(/^file:.*\/dist\//, '')}:${lineNumber + 1}`;
        byFunction.set(at, (byFunction.get(at) ?? 0) + node.selfSize);
        sampledBytes += node.selfSize;
      }
      for (const child of node.children) walk(child);
    };
    walk(profile.head);
    top = [...byFunction].map(([at, b]) => ({ at, bytes: b })).sort((a, b) => b.bytes - a.bytes).slice(0, TOP);
  }
  return { probe: 'stopped', bytes, collections: statistics.length, top, sampledBytes };
}

const failed = (error: unknown) => process.send!({ probe: 'failed', error: error instanceof Error ? error.message : String(error) } satisfies ProbeFailure);

process.on('message', (message: { probe?: string }) => {
  if (message.probe === 'start') start(message as ProbeStart).then(() => process.send!({ probe: 'started' }), failed);
  else if (message.probe === 'stop') stop().then((result) => process.send!(result), failed);
});
