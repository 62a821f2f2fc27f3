// The web UI's entry point: a hash router over the pages, and the signed-in state.
// Routes: #/sign-in, #/runs, #/runs/<id>, #/playground, #/playground/<author>/<slug>, and for
// `manage` keys the dashboard: #/keys, #/providers, #/usage, #/ladders.
import { currentScope, session, whenUnauthorized } from './api.js';
import { announce, h } from './dom.js';
import { keysPage } from './keys-page.js';
import { laddersPage } from './ladders-page.js';
import { openInPlayground } from './open-in-playground.js';
import { playgroundPage } from './playground.js';
import { providersPage } from './providers-page.js';
import { runPage } from './run-page.js';
import { runsPage } from './runs-page.js';
import { signInPage } from './sign-in.js';
import { usagePage } from './usage-page.js';

type Page = (main: HTMLElement, param: string) => () => void;
interface Route { page: Page; param: string; title: string; section: string; manage?: boolean }

const main = document.getElementById('main')!;
const nav = document.getElementById('nav')!;
const signOut = document.getElementById('sign-out') as HTMLButtonElement;
let dispose: () => void = () => {};
let rendering = 0;

const DASHBOARD: Record<string, Route> = {
  '#/keys': { page: keysPage, param: '', title: 'API keys', section: 'keys', manage: true },
  '#/providers': { page: providersPage, param: '', title: 'Providers', section: 'providers', manage: true },
  '#/usage': { page: usagePage, param: '', title: 'Usage', section: 'usage', manage: true },
  '#/ladders': { page: laddersPage, param: '', title: 'Ladders', section: 'ladders', manage: true },
};

function resolve(hash: string): Route {
  const run = /^#\/runs\/([0-9a-fA-F-]{36})$/.exec(hash);
  if (run) return { page: runPage, param: run[1]!, title: 'Run', section: 'runs' };
  if (hash === '#/playground') return { page: playgroundPage, param: '', title: 'Playground', section: 'playground' };
  const open = /^#\/playground\/([^/]+\/[^/]+)$/.exec(hash);
  if (open) return { page: openInPlayground, param: decodeURIComponent(open[1]!), title: 'Playground', section: 'playground' };
  return DASHBOARD[hash] ?? { page: runsPage, param: '', title: 'Your runs', section: 'runs' };
}

/** What a `use` key sees at a dashboard page's address. */
function needsManage(title: string): Page {
  return (target) => {
    target.replaceChildren(
      h('h1', { tabindex: '-1' }, title),
      h('div', { class: 'card narrow', role: 'alert' },
        h('p', {}, 'This page needs an API key with the manage scope. You are signed in with a use key, which can run ladders and chat but not manage the account.'),
        h('p', {}, 'Sign out and sign in with a manage key, or ask the account’s owner.'),
        h('a', { href: '#/runs' }, 'Back to your runs')),
    );
    return () => {};
  };
}

async function render(): Promise<void> {
  const ticket = ++rendering;
  const hash = location.hash;
  dispose();
  dispose = () => {};
  const signedIn = session.key !== null;
  nav.hidden = !signedIn;
  signOut.hidden = !signedIn;
  if (!signedIn) {
    document.title = 'Sign in · Ladder service';
    dispose = signInPage(main, hash.startsWith('#/') && hash !== '#/sign-in' ? hash : '#/runs');
    return;
  }
  if (hash === '#/sign-in' || hash === '' || hash === '#/') {
    history.replaceState(null, '', '#/runs');
  }
  // A tab signed in before the scope was remembered asks once.
  const manage = (session.scope ?? (await currentScope())) === 'manage';
  if (ticket !== rendering) return;
  for (const link of nav.querySelectorAll<HTMLElement>('[data-manage]')) link.hidden = !manage;
  const route = resolve(location.hash);
  const page = route.manage && !manage ? needsManage(route.title) : route.page;
  document.title = `${route.title} · Ladder service`;
  for (const link of nav.querySelectorAll('a')) {
    if (link.dataset.section === route.section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  dispose = page(main, route.param);
  // Move focus to the new page's heading, as a page load would for a screen reader.
  main.querySelector<HTMLElement>('h1')?.focus();
}

window.addEventListener('hashchange', () => {
  // Only #/... are routes; anything else is left to the browser.
  if (location.hash.startsWith('#/') || location.hash === '') void render();
});
signOut.addEventListener('click', () => {
  session.signOut();
  announce('Signed out.');
  location.hash = '#/sign-in';
  void render();
});
document.getElementById('skip')!.addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});
whenUnauthorized(() => {
  session.signOut();
  void render();
  announce('Your API key was not accepted; sign in again.');
});
void render();
