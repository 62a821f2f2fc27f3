// Sign-in with an API key. The key is checked against the API, then kept for this tab only.
import { api, ApiFailure, session, type AccountSummary } from './api.js';
import { announce, h } from './dom.js';

export function signInPage(main: HTMLElement, next: string): () => void {
  const input = h('input', { id: 'api-key', name: 'api-key', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': 'key-help key-error' });
  const error = h('p', { id: 'key-error', class: 'error', role: 'alert' });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h('form', { class: 'card narrow', novalidate: true },
    h('label', { for: 'api-key' }, 'API key'),
    input,
    h('p', { id: 'key-help', class: 'help' }, 'Your key (ldr_live_…) stays in this browser tab only and is forgotten when you close it.'),
    error,
    button,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    error.textContent = '';
    if (!key) {
      error.textContent = 'Enter your API key.';
      input.focus();
      return;
    }
    button.disabled = true;
    try {
      // Tells whether the key works, and whose it is.
      const { body } = await api<AccountSummary>('GET', '/v1/account', undefined, { key });
      session.signIn(key, body);
      announce('Signed in.');
      if (location.hash === next) window.dispatchEvent(new HashChangeEvent('hashchange'));
      else location.hash = next;
    } catch (failure) {
      error.textContent = failure instanceof ApiFailure && failure.status === 401 ? 'This API key was not accepted.' : (failure as Error).message;
      input.focus();
    } finally {
      button.disabled = false;
    }
  });
  main.replaceChildren(h('h1', { tabindex: '-1' }, 'Sign in'), form);
  input.focus();
  return () => {};
}
