// Ladders: the signed-in account's own ladders (GET /v1/{username}), with their visibility
// and current version, each a link that opens it in the playground.
import { api, currentUsername } from './api.js';
import { h, replaceChildren } from './dom.js';
import { date, dateTime } from './format.js';

interface Ladder {
  author: string;
  slug: string;
  name: string;
  description: string;
  version: number;
  usage_visibility: string;
  config_visibility: string;
  updated_at: string;
}

export function laddersPage(main: HTMLElement): () => void {
  const body = h('tbody');
  const error = h('p', { class: 'error', role: 'alert' });
  const table = h('table', { class: 'runs ladders' },
    h('caption', { class: 'visually-hidden' }, 'Your ladders'),
    h('thead', {}, h('tr', {}, ...['Ladder', 'Name', 'Version', 'Who may run it', 'Who may read its config', 'Updated', ''].map((c) => h('th', { scope: 'col' }, c)))),
    body,
  );
  main.replaceChildren(
    h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Ladders'), h('a', { href: '#/playground', class: 'button secondary' }, 'Write a new one in the playground')),
    h('p', { class: 'help' }, 'Private: only your account. Unlisted: anyone with its address. Public: anyone, and it is listed.'),
    error, h('div', { class: 'table-scroll' }, table),
  );
  let stopped = false;
  void (async () => {
    try {
      const username = await currentUsername();
      if (!username) throw new Error('Cannot tell which account this key belongs to.');
      const { body: list } = await api<{ data: Ladder[] }>('GET', `/v1/${encodeURIComponent(username)}`);
      if (stopped) return;
      replaceChildren(body, ...list.data.map((l) => h('tr', { 'data-ladder': `${l.author}/${l.slug}` },
        h('th', { scope: 'row' }, h('code', {}, `${l.author}/${l.slug}`)),
        h('td', { class: 'wrap' }, l.name, l.description ? h('div', { class: 'muted small-text' }, l.description) : null),
        h('td', {}, `v${l.version}`),
        h('td', {}, l.usage_visibility),
        h('td', {}, l.config_visibility),
        h('td', { title: dateTime(l.updated_at) }, date(l.updated_at)),
        h('td', {}, h('a', { href: `#/playground/${l.author}/${l.slug}`, 'aria-label': `Open ${l.author}/${l.slug} in the playground` }, 'Open')),
      )));
      if (list.data.length === 0) body.append(h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No ladders yet. Write one in the playground and save it.')));
    } catch (failure) {
      if (!stopped) error.textContent = `Cannot load your ladders: ${(failure as Error).message}`;
    }
  })();
  return () => {
    stopped = true;
  };
}
