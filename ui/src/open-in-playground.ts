// #/playground/<author>/<slug>: loads that ladder's current config into the playground (through
// the draft the playground keeps in sessionStorage), then shows the playground itself.
import { api } from './api.js';
import { h } from './dom.js';
import { playgroundPage } from './playground.js';
import { stringify } from './vendor/yaml/index.js';

/** The playground's draft in sessionStorage (see playground.ts). */
const PLAYGROUND_STORE = 'ladder.playground';

export function openInPlayground(main: HTMLElement, ladder: string): () => void {
  let dispose = () => {};
  let stopped = false;
  main.replaceChildren(h('h1', { tabindex: '-1' }, 'Playground'), h('p', { role: 'status' }, `Loading ${ladder}…`));
  void (async () => {
    try {
      const [author, slug] = ladder.split('/');
      const { body } = await api<{ config?: unknown }>('GET', `/v1/${encodeURIComponent(author!)}/${encodeURIComponent(slug!)}`);
      if (stopped) return;
      if (body.config === undefined) throw new Error(`The config of ${ladder} is not visible to you.`);
      const draft = JSON.parse(sessionStorage.getItem(PLAYGROUND_STORE) ?? '{}') as Record<string, string>;
      sessionStorage.setItem(PLAYGROUND_STORE, JSON.stringify({ ...draft, config: stringify(body.config), ladder }));
      history.replaceState(null, '', '#/playground');
      dispose = playgroundPage(main);
      main.querySelector<HTMLElement>('h1')?.focus();
    } catch (failure) {
      if (stopped) return;
      main.replaceChildren(h('h1', { tabindex: '-1' }, 'Playground'),
        h('p', { class: 'error', role: 'alert' }, `Cannot open ${ladder}: ${(failure as Error).message}`),
        h('a', { href: '#/ladders' }, 'Back to your ladders'));
    }
  })();
  return () => {
    stopped = true;
    dispose();
  };
}
