// Feeds one SSE stream from the database: the recorded events after the client's last one,
// then new ones as they are written (woken by a NOTIFY, or found by polling), until the
// terminal event, whose data is the instance as GET shows it. Events come from the table, not
// from memory, so it does not matter which process runs the instance. Every write waits for the
// client to keep up (./stream-outlet.ts), so a slow reader costs a few slices, not the run's history.
import type { InstanceService } from '../../services/instances.js';
import { TERMINAL_EVENT_TYPES, type EventWakeups, type InstanceEvent, type InstanceEventReader } from '../../services/instance-events.js';
import { historyFromTrace } from './history-from-trace.js';
import type { SharedMessages } from './shared-messages.js';
import type { Outlet } from './stream-outlet.js';
import { instanceView } from './views.js';

export interface EventStreamDeps {
  events: InstanceEventReader;
  instances: Pick<InstanceService, 'get' | 'statusOf'>;
  wakeups: EventWakeups;
  /** Terminal messages, shared by the streams of a run. */
  terminals: SharedMessages;
  pollMs: number;
  keepAliveMs: number;
}

/** Events read per query. Small, because a client that stops reading holds its page until it is dropped. */
const PAGE = 50;

const FINISHED = new Set(['completed', 'failed', 'cancelled']);
const TERMINAL_OF: Record<string, string> = { completed: 'instance.completed', failed: 'instance.failed', cancelled: 'instance.cancelled' };

/** One SSE message; JSON has no raw newlines, so `data` is always a single line. */
export function sseMessage(id: number, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Writes the stream of instance `id` after event `after` into `out` and ends it after the terminal
 * event. Stops (without ending `out`) when `signal` aborts: the client left or the server closes.
 */
export async function pumpEvents(deps: EventStreamDeps, id: string, after: number, out: Outlet, signal: AbortSignal): Promise<void> {
  // A writer that finishes the row and writes the terminal event in separate transactions gets
  // this long to write the event before the stream makes one up from the row.
  const graceMs = Math.max(1000, 4 * deps.pollMs);
  let last = after;
  let finishedSince: number | null = null;
  let lastWrite = Date.now();
  const write = async (chunk: string | Buffer) => {
    await out.write(chunk);
    lastWrite = Date.now();
  };

  const notices = deps.wakeups.watch(id, { everyEvent: true });
  /** Waits `ms`, or less: until a notice (or one that came during the last read), the abort, or `until` settles. */
  const pause = (ms: number, until?: Promise<void>) => notices.wait(ms, signal, until);

  /** The terminal message, then the end. Its bytes are shared with every other stream sending them. */
  const finish = async (seq: number, type: string) => {
    const { bytes, release } = await deps.terminals.use(`${id} ${seq} ${type}`, () => terminalMessage(seq, type));
    try {
      if (signal.aborted) return;
      if (bytes) await write(bytes);
      if (!signal.aborted) out.end();
    } finally {
      release();
    }
  };
  const terminalMessage = async (seq: number, type: string): Promise<Buffer | null> => {
    let row = await deps.instances.get(id);
    // The terminal event can land just before the row's final update; give the row a moment.
    // (Not cut short by this stream's signal: other streams may be waiting for the same bytes.)
    for (const start = Date.now(); row && !FINISHED.has(row.status) && Date.now() - start < graceMs; ) {
      await new Promise((resolve) => setTimeout(resolve, deps.pollMs));
      row = await deps.instances.get(id);
    }
    return row ? Buffer.from(sseMessage(seq, type, instanceView(row))) : null;
  };

  try {
    // The first read waits for the LISTEN and the run's count of watching processes (at most one
    // poll): an event committed before them is in that read, and every later one is announced.
    // So the first bytes mean the stream is listening.
    await pause(deps.pollMs, notices.ready);
    if (signal.aborted) return;
    await write(`retry: ${Math.max(1000, deps.pollMs * 4)}\n\n`);
    while (!signal.aborted) {
      let batch = await deps.events.after(id, last, PAGE);
      if (batch.length === 0) {
        // Row first, then events: a writer that commits the terminal event with the row's final
        // status is then always seen by the second read.
        const row = await deps.instances.statusOf(id);
        if (!row) return void out.end();
        if (FINISHED.has(row.status)) batch = await deps.events.after(id, last, PAGE);
        if (batch.length === 0 && FINISHED.has(row.status)) {
          finishedSince ??= Math.min(Date.now(), (row.finishedAt ?? new Date()).getTime());
          if (Date.now() - finishedSince >= graceMs) return await synthesiseEnd();
        }
      }
      if (signal.aborted) return;
      for (const event of batch) {
        if (TERMINAL_EVENT_TYPES.has(event.type)) return await finish(event.seq, event.type);
        await write(sseMessage(event.seq, event.type, eventData(event)));
        if (signal.aborted) return;
        last = event.seq;
      }
      if (batch.length === PAGE) continue;
      if (Date.now() - lastWrite >= deps.keepAliveMs) await write(': keep-alive\n\n');
      await pause(Math.min(deps.pollMs, Math.max(1, deps.keepAliveMs - (Date.now() - lastWrite))));
    }
  } finally {
    notices.stop();
  }

  /** A finished run without a terminal event: its history from the trace if it has no events at all, then the end. */
  async function synthesiseEnd(): Promise<void> {
    const row = await deps.instances.get(id);
    if (!row) return void out.end();
    let seq = last;
    if ((await deps.events.after(id, 0, 1)).length === 0) {
      const history = historyFromTrace(row);
      for (const [i, event] of history.entries()) {
        if (signal.aborted) return;
        if (i + 1 > last) await write(sseMessage(i + 1, event.type, Object.assign({}, event.data, { at: event.at.toISOString() })));
      }
      seq = Math.max(last, history.length);
    }
    await finish(seq + 1, TERMINAL_OF[row.status]!);
  }
}

function eventData(event: InstanceEvent): Record<string, unknown> {
  // Object.assign rather than `{ ...data, at }`: Node 20's V8 builds the latter on a slow path.
  return Object.assign({}, event.data, { at: event.createdAt.toISOString() });
}
