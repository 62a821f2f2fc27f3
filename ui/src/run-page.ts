// One run: its summary, a cancel button while it runs, and its timeline, which fills in live
// from the run's event stream. Clicking a node (or Enter on it) shows its prompt and output.
import { api, ApiFailure, authHeaders, FINISHED, instanceDuration, type Instance } from './api.js';
import { announce, h, replaceChildren, statusBadge } from './dom.js';
import { count, dateTime, duration, usd } from './format.js';
import { followEvents } from './sse.js';
import { rerunForm } from './rerun-form.js';
import { renderTimeline, type NodeSelection } from './timeline-view.js';
import { applyEvent, emptyTimeline, TERMINAL_TYPES, totals } from './timeline-model.js';

const REFRESH_MS = 4000;

export function runPage(main: HTMLElement, id: string): () => void {
  const abort = new AbortController();
  const timeline = emptyTimeline();
  let instance: Instance | null = null;
  let selected: NodeSelection | null = null;
  let fullTrace: Promise<unknown> | null = null;

  const heading = h('h1', { tabindex: '-1' }, 'Run');
  const badge = h('span', { class: 'status-slot' });
  const connection = h('span', { class: 'connection muted', role: 'status' });
  const cancel = h('button', { type: 'button', class: 'danger', hidden: true }, 'Cancel run');
  const facts = h('dl', { class: 'facts' });
  const outcome = h('div', { class: 'outcome' });
  const again = h('div', { class: 'again' });
  const error = h('p', { class: 'error', role: 'alert' });
  const timelineBox = h('div', { class: 'timeline-box' });
  const detail = h('section', { class: 'node-detail card', 'aria-labelledby': 'detail-heading', hidden: true, tabindex: '-1' });
  main.replaceChildren(
    h('p', {}, h('a', { href: '#/runs' }, '← All runs')),
    h('div', { class: 'page-head' }, heading, badge, cancel),
    connection, error, facts, outcome, again,
    h('section', { 'aria-labelledby': 'timeline-heading' }, h('h2', { id: 'timeline-heading' }, 'Timeline'), timelineBox),
    detail,
  );

  let frame = 0;
  const scheduleRender = () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      render();
    });
  };

  function render(): void {
    const shown: Instance | null = (timeline.terminal?.instance as Instance | undefined) ?? instance;
    if (shown) {
      heading.textContent = `Run of ${shown.author}/${shown.template}`;
      replaceChildren(badge, statusBadge(shown.status));
      cancel.hidden = FINISHED.has(shown.status);
      const sums = totals(timeline);
      replaceChildren(facts,
        ...fact('Ladder', `${shown.author}/${shown.template} v${shown.version}`),
        ...fact('Model', shown.model),
        ...fact('Mode', shown.mode === 'sync' ? 'synchronous' : 'background'),
        ...fact('Started', dateTime(shown.started_at ?? shown.created_at)),
        ...fact('Duration', duration(instanceDuration(shown))),
        ...fact('Steps run', stepsRun(shown)),
        ...fact('Model calls', count(Math.max(shown.progress?.model_calls ?? 0, sums.nodes))),
        ...fact('Tokens', count(shown.usage?.total_tokens || sums.tokens)),
        ...fact('Spend', usd(shown.spend_usd || sums.costUsd)),
        ...(shown.rerun_of ? [
          ...fact('Rerun of', h('a', { href: `#/runs/${shown.rerun_of}` }, shown.rerun_of.slice(0, 8))),
          ...fact('Reused calls', `${count(shown.reused_calls ?? sums.reused)} of ${count(Math.max(shown.progress?.model_calls ?? 0, sums.nodes))}, saving ${usd(shown.reused_spend_usd ?? 0)}`),
        ] : []),
        ...(Object.keys(shown.knobs ?? {}).length ? fact('Knobs', Object.entries(shown.knobs).map(([k, v]) => `${k} = ${v}`).join(', ')) : []),
      );
      if (shown.status === 'completed' && shown.result) {
        replaceChildren(outcome, h('h2', {}, 'Answer'), h('pre', { class: 'answer' }, shown.result.choices[0]?.message.content ?? ''));
      } else if (shown.error) {
        replaceChildren(outcome, h('h2', {}, shown.status === 'cancelled' ? 'Cancelled' : 'Failed'), h('p', { class: 'error' }, `${shown.error.message} (${shown.error.code})`));
      } else outcome.replaceChildren();
      // Once, so that re-rendering never resets what the user typed.
      if (FINISHED.has(shown.status) && !again.firstChild && instance) again.append(rerunForm(instance));
    }
    const focusedKey = (document.activeElement as HTMLElement | null)?.dataset?.bar;
    renderTimeline(timelineBox, timeline, { now: Date.now(), selected, onSelect: select });
    if (focusedKey) timelineBox.querySelector<HTMLElement>(`[data-bar="${CSS.escape(focusedKey)}"]`)?.focus();
  }

  /**
   * The instance's count is polled every few seconds; the timeline's finished rows arrive live.
   * Each finished row is one step execution, as the count counts them, so the larger is current.
   */
  function stepsRun(shown: Instance): string {
    const finished = Math.max(timeline.rows.filter((r) => r.end !== null).length, shown.progress?.steps_completed ?? 0);
    const total = shown.progress?.steps_total ?? 0;
    return total ? `${finished} of ${total}` : String(finished);
  }

  function fact(term: string, value: string | HTMLElement): HTMLElement[] {
    return [h('dt', {}, term), h('dd', {}, value)];
  }

  async function select(selection: NodeSelection): Promise<void> {
    selected = selection;
    const { row, bar } = selection;
    const where = `${row.step} · node ${bar.node} · pass ${row.pass}${row.depth ? ` · depth ${row.depth}` : ''}`;
    const outcomeText = { succeeded: 'Succeeded', pruned: 'Pruned by its gate', failed: 'Failed' }[bar.outcome];
    const prompt = h('pre', { class: 'text', id: 'node-prompt' }, bar.prompt ?? '(not recorded)');
    const output = h('pre', { class: 'text', id: 'node-output' }, bar.error ?? bar.output ?? '(not recorded)');
    replaceChildren(detail,
      h('div', { class: 'page-head' }, h('h2', { id: 'detail-heading', tabindex: '-1' }, where), h('button', { type: 'button', class: 'secondary', onclick: closeDetail }, 'Close')),
      h('dl', { class: 'facts' },
        ...fact('Outcome', outcomeText),
        ...(bar.reused ? fact('Reused', 'from the run this one reran: not sent again, not paid for again') : []),
        ...fact('Provider', bar.provider ?? '–'),
        ...fact('Latency', duration(bar.latencyMs)),
        ...fact('Tokens', bar.usage ? `${count(bar.usage.prompt_tokens)} in, ${count(bar.usage.completion_tokens)} out` : '–'),
        ...fact('Cost', usd(bar.costUsd)),
        ...fact('Ran', `${new Date(bar.start).toLocaleTimeString()} to ${new Date(bar.end).toLocaleTimeString()}`),
      ),
      h('h3', {}, 'Prompt'), prompt,
      h('h3', {}, bar.error ? 'Error' : 'Output'), output,
    );
    detail.hidden = false;
    detail.querySelector<HTMLElement>('#detail-heading')?.focus();
    scheduleRender();
    // The events carry excerpts; the trace, where the API offers it, has the full texts.
    const full = await traceNode(row.step, row.pass, row.depth, bar.node);
    if (selected !== selection || !full) return;
    if (typeof full.prompt === 'string') prompt.textContent = full.prompt;
    if (typeof full.output === 'string' && !bar.error) output.textContent = full.output;
  }

  function closeDetail(): void {
    const key = selected ? `${selected.row.key}/${selected.bar.node}` : null;
    selected = null;
    detail.hidden = true;
    render();
    if (key) timelineBox.querySelector<HTMLElement>(`[data-bar="${CSS.escape(key)}"]`)?.focus();
  }

  async function traceNode(step: string, pass: number, depth: number, node: number): Promise<Record<string, unknown> | null> {
    fullTrace ??= api<unknown>('GET', `/v1/pipelines/instances/${id}/trace`).then((r) => r.body, () => null);
    const body = await fullTrace;
    const steps = (Array.isArray(body) ? body : ((body as { trace?: unknown; data?: unknown } | null)?.trace ?? (body as { data?: unknown } | null)?.data)) as unknown;
    if (!Array.isArray(steps)) return null;
    const entry = steps.find((s: Record<string, unknown>) => (s.stepId ?? s.step) === step && s.pass === pass && s.depth === depth) as { nodes?: Array<Record<string, unknown>> } | undefined;
    return entry?.nodes?.find((n) => n.node === node) ?? null;
  }

  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    try {
      await api('POST', `/v1/pipelines/instances/${id}/cancel`, {});
      announce('Cancel requested.');
      await refresh();
    } catch (failure) {
      error.textContent = `Cannot cancel: ${(failure as Error).message}`;
    } finally {
      cancel.disabled = false;
    }
  });

  async function refresh(): Promise<void> {
    try {
      instance = (await api<Instance>('GET', `/v1/pipelines/instances/${id}`, undefined, { signal: abort.signal })).body;
      error.textContent = '';
    } catch (failure) {
      if ((failure as Error).name === 'AbortError') return;
      if (failure instanceof ApiFailure && failure.code === 'instance_not_found') error.textContent = 'This run does not exist, or is not yours.';
    }
    scheduleRender();
  }

  // Summary figures (spend, progress) come from the instance; the timeline from the events.
  void refresh();
  const poll = window.setInterval(() => {
    if (!timeline.terminal) void refresh();
    else scheduleRender();
  }, REFRESH_MS);
  // While the run goes on, running bars grow with the clock.
  const tick = window.setInterval(() => {
    if (!timeline.terminal && timeline.rows.length > 0) scheduleRender();
  }, 1000);

  void followEvents({
    url: `/v1/pipelines/instances/${id}/events`,
    headers: authHeaders,
    signal: abort.signal,
    isTerminal: (event) => TERMINAL_TYPES.has(event.event),
    onState: (state) => {
      connection.textContent = { live: 'Live: updates as the run goes.', reconnecting: 'Connection lost; reconnecting…', ended: '' }[state];
    },
    onFatal: (status) => {
      connection.textContent = '';
      error.textContent = status === 404 ? 'This run does not exist, or is not yours.' : `The live view stopped (HTTP ${status}).`;
    },
    onEvent: (event) => {
      let data: Record<string, unknown>;
      try {
        data = JSON.parse(event.data) as Record<string, unknown>;
      } catch {
        return;
      }
      applyEvent(timeline, { seq: Number(event.id), type: event.event, data });
      if (event.event === 'step.completed') {
        const row = timeline.rows.findLast((r) => r.step === data.step && r.end !== null);
        if (row) announce(`Step ${row.step} finished: ${row.survivors ?? row.nodes.length} of ${row.nodes.length} nodes kept.`);
      } else if (TERMINAL_TYPES.has(event.event)) {
        announce(`Run ${String(data.status ?? event.event.replace('instance.', ''))}.`);
        void refresh();
      }
      scheduleRender();
    },
  });

  return () => {
    abort.abort();
    window.clearInterval(poll);
    window.clearInterval(tick);
    cancelAnimationFrame(frame);
  };
}
