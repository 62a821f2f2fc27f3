// Loaded into the service by bench/chat-stream.ts (`node --import`): its event-loop delay and
// RSS, measured inside the process. On SIGUSR2 it writes them to BENCH_PROBE_FILE as JSON and
// starts a new measurement, so a figure covers one phase of the bench only.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.BENCH_PROBE_FILE;
if (file) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let peakRss = process.memoryUsage.rss();
  // RSS sampled often enough to catch the peak of a phase.
  setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50).unref();
  process.on('SIGUSR2', () => {
    const rss = process.memoryUsage.rss();
    writeFileSync(file, JSON.stringify({ p99Ms: delay.percentile(99) / 1e6, maxMs: delay.max / 1e6, rss, peakRss: Math.max(peakRss, rss) }));
    delay.reset();
    peakRss = rss;
  });
}
