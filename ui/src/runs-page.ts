// The caller's runs, newest first, filterable by status and ladder; the list is read again
// every few seconds so new runs and status changes show up by themselves.
import { api, ApiFailure, instanceDuration, type Instance } from './api.js';
import { announce, h, replaceChildren, statusBadge } from './dom.js';
import { count, dateTime, duration, usd } from './format.js';

const POLL_MS = 3000;
const STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'];

interface InstanceList {
  data: Instance[];
  has_more: boolean;
  next_cursor: string | null;
}

export function runsPage(main: HTMLElement): () => void {
  const filters = new URLSearchParams(sessionStorage.getItem('ladder.runFilters') ?? '');
  const status = h('select', { id: 'filter-status', name: 'status' },
    h('option', { value: '' }, 'Any status'),
    ...STATUSES.map((s) => h('option', { value: s, selected: filters.get('status') === s }, s)),
  );
  const ladder = h('input', { id: 'filter-ladder', name: 'ladder', type: 'search', value: filters.get('ladder') ?? '', placeholder: 'slug or author/slug', list: 'known-ladders', autocomplete: 'off' });
  const known = h('datalist', { id: 'known-ladders' });
  const summary = h('p', { class: 'help', id: 'runs-summary' });
  const body = h('tbody');
  const error = h('p', { class: 'error', role: 'alert' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Show more');
  const table = h('table', { class: 'runs', 'aria-describedby': 'runs-summary' },
    h('caption', { class: 'visually-hidden' }, 'Your runs, newest first'),
    h('thead', {}, h('tr', {}, ...['Status', 'Ladder', 'Model', 'Started', 'Duration', 'Spend', 'Tokens'].map((c) => h('th', { scope: 'col' }, c)))),
    body,
  );
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter runs' },
    h('div', { class: 'field' }, h('label', { for: 'filter-status' }, 'Status'), status),
    h('div', { class: 'field' }, h('label', { for: 'filter-ladder' }, 'Ladder'), ladder, known),
  );
  main.replaceChildren(
    h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Your runs'), h('a', { href: '#/playground', class: 'button secondary' }, 'New run in the playground')),
    form, error, summary, h('div', { class: 'table-scroll' }, table), more,
  );

  let pages = 1;
  let stopped = false;
  let timer: number | undefined;
  let inFlight: AbortController | null = null;
  const seen = new Map<string, string>();
  const ladders = new Set<string>();

  const query = (after?: string) => {
    const q = new URLSearchParams({ limit: '50' });
    if (status.value) q.set('status', status.value);
    const wanted = ladder.value.trim();
    if (wanted.includes('/')) {
      const [author, template] = wanted.split('/', 2);
      if (author) q.set('author', author);
      if (template) q.set('template', template);
    } else if (wanted) q.set('template', wanted);
    if (after) q.set('after', after);
    return `/v1/pipelines/instances?${q}`;
  };

  async function load(): Promise<void> {
    inFlight?.abort();
    const abort = (inFlight = new AbortController());
    try {
      const rows: Instance[] = [];
      let cursor: string | undefined;
      let hasMore = false;
      for (let page = 0; page < pages; page++) {
        const { body: list } = await api<InstanceList>('GET', query(cursor), undefined, { signal: abort.signal });
        rows.push(...list.data);
        hasMore = list.has_more;
        cursor = list.next_cursor ?? undefined;
        if (!hasMore || !cursor) break;
      }
      if (stopped || abort.signal.aborted) return;
      error.textContent = '';
      render(rows, hasMore);
    } catch (failure) {
      if ((failure as Error).name === 'AbortError' || stopped) return;
      error.textContent = failure instanceof ApiFailure ? `Cannot load your runs: ${failure.message}` : String(failure);
    } finally {
      if (!stopped && inFlight === abort) timer = window.setTimeout(load, POLL_MS);
    }
  }

  function render(rows: Instance[], hasMore: boolean): void {
    const changes: string[] = [];
    for (const run of rows) {
      const previous = seen.get(run.instanceId);
      if (seen.size > 0 && previous === undefined) changes.push(`New run of ${run.template}: ${run.status}.`);
      else if (previous !== undefined && previous !== run.status) changes.push(`Run of ${run.template} is now ${run.status}.`);
      seen.set(run.instanceId, run.status);
      ladders.add(`${run.author}/${run.template}`);
    }
    replaceChildren(known, ...[...ladders].sort().map((l) => h('option', { value: l })));
    replaceChildren(body, ...rows.map(row));
    if (rows.length === 0) body.append(h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No runs yet. Start one from the playground or the API.')));
    summary.textContent = `${rows.length}${hasMore ? '+' : ''} run${rows.length === 1 ? '' : 's'}; refreshed every ${POLL_MS / 1000} seconds.`;
    more.hidden = !hasMore;
    if (changes.length > 0) announce(changes.slice(0, 3).join(' '));
  }

  function row(run: Instance): HTMLTableRowElement {
    return h('tr', { 'data-instance': run.instanceId },
      h('td', {}, statusBadge(run.status)),
      h('td', {}, h('a', { href: `#/runs/${run.instanceId}` }, `${run.author}/${run.template}`), h('span', { class: 'muted' }, ` v${run.version}`)),
      h('td', {}, run.model),
      h('td', {}, dateTime(run.started_at ?? run.created_at)),
      h('td', {}, duration(instanceDuration(run))),
      h('td', {}, usd(run.spend_usd)),
      h('td', {}, count(run.usage?.total_tokens ?? null)),
    );
  }

  const refilter = () => {
    sessionStorage.setItem('ladder.runFilters', new URLSearchParams({ status: status.value, ladder: ladder.value.trim() }).toString());
    pages = 1;
    seen.clear();
    window.clearTimeout(timer);
    void load();
  };
  status.addEventListener('change', refilter);
  ladder.addEventListener('change', refilter);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    refilter();
  });
  more.addEventListener('click', () => {
    pages++;
    window.clearTimeout(timer);
    void load();
  });
  void load();
  return () => {
    stopped = true;
    window.clearTimeout(timer);
    inFlight?.abort();
  };
}
