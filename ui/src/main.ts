// The web UI's entry point: a hash router over four pages, and the signed-in state.
// Routes: #/sign-in, #/runs, #/runs/<id>, #/playground.
import { session, whenUnauthorized } from './api.js';
import { announce } from './dom.js';
import { playgroundPage } from './playground.js';
import { runPage } from './run-page.js';
import { runsPage } from './runs-page.js';
import { signInPage } from './sign-in.js';

type Page = (main: HTMLElement, param: string) => () => void;

const main = document.getElementById('main')!;
const nav = document.getElementById('nav')!;
const signOut = document.getElementById('sign-out') as HTMLButtonElement;
let dispose: () => void = () => {};

function resolve(hash: string): { page: Page; param: string; title: string; section: string } {
  const run = /^#\/runs\/([0-9a-fA-F-]{36})$/.exec(hash);
  if (run) return { page: runPage, param: run[1]!, title: 'Run', section: 'runs' };
  if (hash === '#/playground') return { page: playgroundPage, param: '', title: 'Playground', section: 'playground' };
  return { page: runsPage, param: '', title: 'Your runs', section: 'runs' };
}

function render(): void {
  const hash = location.hash;
  dispose();
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
  const { page, param, title, section } = resolve(location.hash);
  document.title = `${title} · Ladder service`;
  for (const link of nav.querySelectorAll('a')) {
    if (link.dataset.section === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  dispose = page(main, param);
  // Move focus to the new page's heading, as a page load would for a screen reader.
  main.querySelector<HTMLElement>('h1')?.focus();
}

window.addEventListener('hashchange', () => {
  // Only #/... are routes; anything else is left to the browser.
  if (location.hash.startsWith('#/') || location.hash === '') render();
});
signOut.addEventListener('click', () => {
  session.signOut();
  announce('Signed out.');
  location.hash = '#/sign-in';
  render();
});
document.getElementById('skip')!.addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});
whenUnauthorized(() => {
  session.signOut();
  render();
  announce('Your API key was not accepted; sign in again.');
});
render();
