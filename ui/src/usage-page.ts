// Usage: spend and tokens per day over the last 7, 30 or 90 days, stacked by model or by
// provider, and tables by API key and by ladder; all from GET /v1/usage (UTC days).
import { api } from './api.js';
import { announce, h, replaceChildren } from './dom.js';
import { count, nanos, usd } from './format.js';
import { lastDays, toSeries, type Series, type UsageRow } from './chart-model.js';
import { stackedBars } from './stacked-bars.js';

/** Dollars summed as whole nanos, so a total equals the sum of its rows exactly. */
const sumUsd = (rows: UsageRow[]) => rows.reduce((a, r) => a + nanos(r.cost_usd), 0) / 1e9;

interface Report { data: UsageRow[] }
interface KeyInfo { id: string; name: string | null; key_prefix: string; revoked_at: string | null }

const STORE = 'ladder.usage';
const RANGES = [7, 30, 90];

export function usagePage(main: HTMLElement): () => void {
  const saved = new URLSearchParams(sessionStorage.getItem(STORE) ?? '');
  const range = h('select', { id: 'usage-range', name: 'range' },
    ...RANGES.map((d) => h('option', { value: d, selected: String(d) === (saved.get('range') ?? '30') }, `Last ${d} days`)));
  const stackModel = h('input', { type: 'radio', name: 'stack', id: 'stack-model', value: 'model', checked: saved.get('stack') !== 'provider' });
  const stackProvider = h('input', { type: 'radio', name: 'stack', id: 'stack-provider', value: 'provider', checked: saved.get('stack') === 'provider' });
  const error = h('p', { class: 'error', role: 'alert' });
  const summary = h('div', { class: 'totals', role: 'status' });
  const spendChart = h('figure', { class: 'chart-box' });
  const tokenChart = h('figure', { class: 'chart-box' });
  const legend = h('ul', { class: 'legend', 'aria-label': 'Colours of the charts' });
  const daily = h('div', { class: 'table-scroll' });
  const byKey = h('div', { class: 'table-scroll' });
  const byLadder = h('div', { class: 'table-scroll' });
  main.replaceChildren(
    h('h1', { tabindex: '-1' }, 'Usage'),
    h('form', { class: 'filters', 'aria-label': 'Usage range and grouping' },
      h('div', { class: 'field' }, h('label', { for: 'usage-range' }, 'Range'), range),
      h('fieldset', { class: 'inline' }, h('legend', {}, 'Stack by'),
        h('div', {}, stackModel, h('label', { for: 'stack-model' }, 'Model'), stackProvider, h('label', { for: 'stack-provider' }, 'Provider')))),
    error, summary,
    h('div', { class: 'charts' },
      h('section', { 'aria-labelledby': 'spend-title' }, h('h2', { id: 'spend-title' }, 'Spend per day'), spendChart),
      h('section', { 'aria-labelledby': 'tokens-title' }, h('h2', { id: 'tokens-title' }, 'Tokens per day'), tokenChart)),
    legend,
    h('details', { class: 'daily' }, h('summary', {}, 'The figures per day, as a table'), daily),
    h('div', { class: 'usage-tables' },
      h('section', { 'aria-labelledby': 'by-key-title' }, h('h2', { id: 'by-key-title' }, 'By API key'), byKey),
      h('section', { 'aria-labelledby': 'by-ladder-title' }, h('h2', { id: 'by-ladder-title' }, 'By ladder'), byLadder)),
    h('p', { class: 'help' }, 'Days are UTC. Every model call counts, failed ones included; a ladder run counts each call it makes.'),
  );

  let stopped = false;
  let loaded: { days: string[]; perDay: UsageRow[]; keys: UsageRow[]; ladders: UsageRow[]; names: Map<string, string>; stack: string } | null = null;
  let keyNames: Map<string, string> | null = null;

  async function load(): Promise<void> {
    const days = lastDays(Number(range.value));
    const stack = stackProvider.checked ? 'provider' : 'model';
    sessionStorage.setItem(STORE, new URLSearchParams({ range: range.value, stack }).toString());
    const query = (group: string, then?: string) => `/v1/usage?${new URLSearchParams({ start: days[0]!, end: days.at(-1)!, group_by: group, ...(then ? { then_by: then } : {}) })}`;
    try {
      const [perDay, keys, ladders, names] = await Promise.all([
        api<Report>('GET', query('day', stack)),
        api<Report>('GET', query('api_key')),
        api<Report>('GET', query('ladder')),
        keyNames ? Promise.resolve(keyNames) : api<{ data: KeyInfo[] }>('GET', '/v1/api-keys').then((r) => new Map(r.body.data.map((k) => [k.id, `${k.name ?? 'unnamed'} (${k.key_prefix}…)${k.revoked_at ? ', revoked' : ''}`]))),
      ]);
      if (stopped) return;
      keyNames = names;
      loaded = { days, perDay: perDay.body.data, keys: keys.body.data, ladders: ladders.body.data, names, stack };
      error.textContent = '';
      render();
    } catch (failure) {
      if (!stopped) error.textContent = `Cannot load your usage: ${(failure as Error).message}`;
    }
  }

  function render(): void {
    if (!loaded) return;
    const { days, perDay, keys, ladders, names, stack } = loaded;
    const nameOf = (subgroup: string | null) => subgroup ?? (stack === 'provider' ? 'no provider (failed)' : 'unknown');
    const spend = toSeries(perDay, days, (r) => r.cost_usd, nameOf);
    const tokens = toSeries(perDay, days, (r) => r.total_tokens, nameOf);
    const total = (field: 'requests' | 'total_tokens') => perDay.reduce((a, r) => a + r[field], 0);
    replaceChildren(summary,
      figure('Spend', usd(sumUsd(perDay)), 'total-spend'), figure('Tokens', count(total('total_tokens')), 'total-tokens'), figure('Requests', count(total('requests')), 'total-requests'));
    // Both charts share one colour per name: the spend chart's order decides it.
    const order = [...spend, ...tokens.filter((t) => !spend.some((s) => s.name === t.name))].map((s) => s.name);
    const inOrder = (series: Series[]) => order.map((name) => series.find((s) => s.name === name) ?? { name, values: days.map(() => 0) });
    drawnWidth = spendChart.clientWidth;
    const width = Math.max(280, Math.floor(drawnWidth || 600));
    const short = (day: string) => day.slice(5);
    replaceChildren(spendChart, stackedBars({ title: `Spend per day by ${stack}, last ${days.length} days`, labels: days, series: inOrder(spend), format: usd, shortLabel: short, width }));
    replaceChildren(tokenChart, stackedBars({ title: `Tokens per day by ${stack}, last ${days.length} days`, labels: days, series: inOrder(tokens), format: compact, shortLabel: short, width }));
    replaceChildren(legend, ...(order.length ? order.map((name, k) => h('li', {}, h('span', { class: `swatch series-${k % 8}`, 'aria-hidden': 'true' }), ` ${name}`)) : [h('li', { class: 'muted' }, 'No calls in this range.')]));
    replaceChildren(daily, table('Per day', ['Day', 'Requests', 'Tokens', 'Spend'], days.map((day) => {
      const rows = perDay.filter((r) => r.group === day);
      return [day, count(rows.reduce((a, r) => a + r.requests, 0)), count(rows.reduce((a, r) => a + r.total_tokens, 0)), usd(sumUsd(rows))];
    })));
    const sorted = (rows: UsageRow[]) => [...rows].sort((a, b) => b.cost_usd - a.cost_usd || b.total_tokens - a.total_tokens);
    replaceChildren(byKey, table('Usage by API key', ['Key', 'Requests', 'Tokens', 'Spend'],
      sorted(keys).map((r) => [r.group ? names.get(r.group) ?? r.group : 'unknown key', count(r.requests), count(r.total_tokens), usd(r.cost_usd)]), 'usage-by-key'));
    replaceChildren(byLadder, table('Usage by ladder', ['Ladder', 'Requests', 'Tokens', 'Spend'],
      sorted(ladders).map((r) => [r.group ?? 'direct calls (no ladder)', count(r.requests), count(r.total_tokens), usd(r.cost_usd)]), 'usage-by-ladder'));
  }

  range.addEventListener('change', () => void load().then(() => announce(`Showing the last ${range.value} days.`)));
  for (const radio of [stackModel, stackProvider]) radio.addEventListener('change', () => void load());
  // The charts are drawn to the page's width: again when it changes (a phone turned sideways).
  let drawnWidth = 0;
  const resized = new ResizeObserver(() => {
    if (spendChart.clientWidth !== drawnWidth) render();
  });
  resized.observe(spendChart);
  void load();
  return () => {
    stopped = true;
    resized.disconnect();
  };
}

function figure(label: string, value: string, id: string): HTMLElement {
  return h('div', { class: 'figure' }, h('span', { class: 'muted' }, label), h('strong', { id }, value));
}

/** 1234567 as 1.2M, for an axis. */
function compact(value: number): string {
  return new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 }).format(value);
}

function table(caption: string, columns: string[], rows: string[][], id?: string): HTMLTableElement {
  return h('table', { class: 'runs figures', id },
    h('caption', { class: 'visually-hidden' }, caption),
    h('thead', {}, h('tr', {}, ...columns.map((c, i) => h('th', { scope: 'col', class: i > 0 ? 'num' : null }, c)))),
    h('tbody', {}, ...(rows.length ? rows.map((r) => h('tr', {}, ...r.map((cell, i) => (i === 0 ? h('th', { scope: 'row' }, cell) : h('td', { class: 'num' }, cell))))) : [h('tr', {}, h('td', { colspan: columns.length, class: 'empty' }, 'No calls in this range.'))])),
  );
}
