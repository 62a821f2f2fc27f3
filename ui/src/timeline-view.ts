// Draws a timeline: one row per step execution (indented by recursion depth, with its pass
// and group), one lane per node, each node a button placed by its start and end. Outcomes are
// told by an icon, a word in the accessible name and a pattern, never by colour alone.
import { h } from './dom.js';
import { count, duration, offset, usd } from './format.js';
import { axisTicks, type NodeBar, type StepRow, type Timeline } from './timeline-model.js';

export interface NodeSelection {
  row: StepRow;
  bar: NodeBar;
}

const OUTCOMES = {
  succeeded: { icon: '✓', label: 'Succeeded' },
  pruned: { icon: '⊘', label: 'Pruned by its gate' },
  failed: { icon: '✗', label: 'Failed' },
} as const;

export function legend(): HTMLElement {
  return h('ul', { class: 'legend', 'aria-label': 'Legend' },
    ...Object.entries(OUTCOMES).map(([key, { icon, label }]) =>
      h('li', {}, h('span', { class: `swatch bar-${key}`, 'aria-hidden': 'true' }, icon), ` ${label}`)),
    h('li', {}, h('span', { class: 'swatch bar-running', 'aria-hidden': 'true' }, '…'), ' Running'),
    h('li', {}, h('span', { class: 'swatch bar-succeeded reused', 'aria-hidden': 'true' }, '♻'), ' Reused from the run it reran'),
  );
}

export function renderTimeline(
  box: HTMLElement,
  timeline: Timeline,
  options: { now: number; selected: NodeSelection | null; onSelect: (selection: NodeSelection) => void },
): void {
  const start = timeline.start;
  if (start === null || timeline.rows.length === 0) {
    box.replaceChildren(legend(), h('p', { class: 'empty' }, timeline.terminal ? 'This run recorded no steps.' : 'Waiting for the run to start…'));
    return;
  }
  const end = timeline.end ?? Math.max(options.now, ...timeline.rows.flatMap((r) => r.nodes.map((n) => n.end)));
  const span = Math.max(1000, end - start);
  const at = (t: number) => `${(((t - start) / span) * 100).toFixed(3)}%`;
  const width = (a: number, b: number) => `max(6px, ${(((b - a) / span) * 100).toFixed(3)}%)`;

  const axis = h('div', { class: 'tl-axis', 'aria-hidden': 'true' }, h('div', { class: 'tl-label' }, 'Step'));
  const ticks = h('div', { class: 'tl-track' });
  for (const tick of axisTicks(span)) {
    const mark = h('span', { class: 'tick' }, offset(tick));
    mark.style.left = at(start + tick);
    ticks.append(mark);
  }
  axis.append(ticks);

  const rows = h('ol', { class: 'tl-rows' });
  for (const row of timeline.rows) {
    const label = h('div', { class: 'tl-label' },
      h('span', { class: 'step-name' }, row.depth > 0 ? h('span', { 'aria-hidden': 'true', class: 'depth-mark' }, '↳ ') : null, row.step),
      h('span', { class: 'meta' }, [`pass ${row.pass}`, row.depth > 0 ? `depth ${row.depth}` : null, row.group ? `group ${row.group}` : null].filter(Boolean).join(' · ')),
      h('span', { class: 'meta' }, row.end === null ? 'running' : `${row.survivors ?? row.nodes.length} of ${row.nodes.length} kept`),
    );
    label.style.setProperty('--depth', String(row.depth));
    const track = h('div', { class: 'tl-track' });
    for (const bar of row.nodes) track.append(lane(row, bar));
    if (row.end === null) {
      const running = h('div', { class: 'bar bar-running', 'aria-hidden': 'true' }, '…');
      running.style.left = at(row.start);
      running.style.width = width(row.start, end);
      track.append(h('div', { class: 'lane' }, running));
    }
    const item = h('li', { class: 'tl-row', 'aria-label': `${row.step}, pass ${row.pass}${row.depth ? `, depth ${row.depth}` : ''}` }, label, track);
    rows.append(item);
  }

  function lane(row: StepRow, bar: NodeBar): HTMLElement {
    const { icon, label } = OUTCOMES[bar.outcome];
    const key = `${row.key}/${bar.node}`;
    const isSelected = options.selected?.row.key === row.key && options.selected.bar.node === bar.node;
    const details = [label, bar.reused ? 'reused, not paid again' : null, bar.provider, duration(bar.latencyMs), bar.usage ? `${count(bar.usage.total_tokens)} tokens` : null, bar.costUsd !== null ? usd(bar.costUsd) : null]
      .filter(Boolean).join(', ');
    const button = h('button', {
      type: 'button',
      class: `bar bar-${bar.outcome}${bar.reused ? ' reused' : ''}`,
      'data-bar': key,
      'aria-label': `Node ${bar.node} of ${row.step}: ${details}. Show prompt and output.`,
      'aria-current': isSelected ? 'true' : null,
      title: `Node ${bar.node}: ${details}`,
    }, h('span', { 'aria-hidden': 'true' }, `${icon}${bar.reused ? '♻' : ''} ${bar.node}`));
    button.style.left = at(bar.start);
    button.style.width = width(bar.start, bar.end);
    button.addEventListener('click', () => options.onSelect({ row, bar }));
    return h('div', { class: 'lane' }, button);
  }

  box.replaceChildren(
    legend(),
    timeline.reconstructed ? h('p', { class: 'help' }, 'This run ended before runs recorded live events: its timeline is rebuilt from the stored trace, and times are estimates.') : '',
    h('div', { class: 'timeline' }, axis, rows),
  );
}
