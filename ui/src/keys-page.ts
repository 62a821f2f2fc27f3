// Keys: the account's API keys (GET/POST/DELETE /v1/api-keys). A new key's secret is shown
// once, with a copy button; revoking asks first.
import { api, ApiFailure } from './api.js';
import { confirmAction } from './confirm.js';
import { announce, h, replaceChildren } from './dom.js';
import { date, dateTime } from './format.js';

interface ApiKey {
  id: string;
  key_prefix: string;
  name: string | null;
  scope: 'use' | 'manage';
  access: { mode: 'unrestricted' | 'whitelist' | 'blacklist'; ladders: string[] };
  expires_at: string | null;
  created_at: string;
  revoked_at: string | null;
}

const LADDER_RE = /^[a-z0-9][a-z0-9-]*\/(\*|[a-z0-9][a-z0-9_-]*)$/;

export function keysPage(main: HTMLElement): () => void {
  const body = h('tbody');
  const error = h('p', { class: 'error', role: 'alert' });
  const secretBox = h('div', { class: 'card secret', hidden: true, role: 'region', 'aria-label': 'The key just created' });
  const table = h('table', { class: 'runs keys' },
    h('caption', { class: 'visually-hidden' }, 'Your account’s API keys, oldest first'),
    h('thead', {}, h('tr', {}, ...['Name', 'Key', 'Scope', 'Ladder access', 'Expires', 'Created', 'Status', ''].map((c) => h('th', { scope: 'col' }, c)))),
    body,
  );
  const form = createForm(async (created) => {
    showSecret(created);
    await load();
  });
  main.replaceChildren(
    h('h1', { tabindex: '-1' }, 'API keys'),
    h('p', { class: 'help' }, 'Keys of your account. A use key calls models and runs ladders; a manage key also manages keys, webhooks and the account. The full key is shown once, when it is created.'),
    secretBox, error,
    h('div', { class: 'table-scroll' }, table),
    h('h2', {}, 'Create a key'), form,
  );

  let stopped = false;
  /** The key this tab is signed in with: revoking it signs the tab out. */
  let ownId: string | null = null;

  async function load(): Promise<void> {
    try {
      const [{ body: list }, account] = await Promise.all([
        api<{ data: ApiKey[] }>('GET', '/v1/api-keys'),
        ownId ? null : api<{ key: { id: string } }>('GET', '/v1/account'),
      ]);
      ownId ??= account?.body.key.id ?? null;
      if (stopped) return;
      error.textContent = '';
      replaceChildren(body, ...list.data.map(row));
    } catch (failure) {
      if (!stopped) error.textContent = `Cannot load your keys: ${(failure as Error).message}`;
    }
  }

  function row(key: ApiKey): HTMLTableRowElement {
    const expired = key.expires_at !== null && Date.parse(key.expires_at) <= Date.now();
    const state = key.revoked_at ? 'revoked' : expired ? 'expired' : 'active';
    const revoke = h('button', { type: 'button', class: 'secondary small', 'aria-label': `Revoke ${key.name ?? key.key_prefix}` }, 'Revoke');
    revoke.addEventListener('click', async () => {
      const label = key.name ? `“${key.name}” (${key.key_prefix}…)` : `${key.key_prefix}…`;
      const self = key.id === ownId ? ' You are signed in with this key: you will be signed out.' : '';
      if (!(await confirmAction(`Revoke ${label}?`, `It stops working at once, everywhere. This cannot be undone.${self}`, 'Revoke key'))) return;
      try {
        await api('DELETE', `/v1/api-keys/${key.id}`);
        announce(`Key ${label} revoked.`);
        await load();
      } catch (failure) {
        error.textContent = `Cannot revoke the key: ${(failure as Error).message}`;
      }
    });
    return h('tr', { 'data-key': key.id },
      h('td', {}, key.name ?? h('span', { class: 'muted' }, 'unnamed'), key.id === ownId ? h('div', { class: 'muted small-text' }, 'signed in here') : null),
      h('td', {}, h('code', {}, `${key.key_prefix}…`)),
      h('td', {}, key.scope),
      h('td', { class: 'wrap' }, key.access.mode === 'unrestricted' ? 'every ladder' : `${key.access.mode === 'whitelist' ? 'only' : 'all but'} ${key.access.ladders.join(', ') || '(none)'}`),
      h('td', { title: key.expires_at ? dateTime(key.expires_at) : null }, key.expires_at ? date(key.expires_at) : 'never'),
      h('td', { title: dateTime(key.created_at) }, date(key.created_at)),
      h('td', {}, h('span', { class: `badge key-${state}` }, state)),
      h('td', {}, state === 'revoked' ? '' : revoke),
    );
  }

  function showSecret(created: ApiKey & { key: string }): void {
    const field = h('input', { id: 'new-key', type: 'text', readonly: true, value: created.key, class: 'code', spellcheck: 'false', 'aria-describedby': 'new-key-help' });
    const copy = h('button', { type: 'button' }, 'Copy');
    const done = h('button', { type: 'button', class: 'secondary' }, 'I have stored it');
    const copied = h('span', { class: 'ok', role: 'status' });
    copy.addEventListener('click', async () => {
      field.select();
      try {
        await navigator.clipboard.writeText(created.key);
        copied.textContent = 'Copied.';
      } catch {
        copied.textContent = 'Select the key and copy it (Ctrl+C).';
      }
    });
    done.addEventListener('click', () => {
      secretBox.hidden = true;
      secretBox.replaceChildren(); // the secret leaves the page
      form.querySelector<HTMLInputElement>('input')?.focus();
    });
    replaceChildren(secretBox,
      h('h2', {}, `Key “${created.name ?? created.key_prefix}” created`),
      h('label', { for: 'new-key' }, 'Your new key'),
      h('div', { class: 'copy-row' }, field, copy),
      h('p', { id: 'new-key-help', class: 'help' }, 'Copy it now: it is not shown again, and the service keeps only a hash of it.'),
      copied, h('div', {}, done),
    );
    secretBox.hidden = false;
    field.focus();
    field.select();
    announce('Key created. Copy it now; it is not shown again.');
  }

  void load();
  return () => {
    stopped = true;
  };
}

/** The create form; `onCreated` gets the answer of POST /v1/api-keys, secret included. */
function createForm(onCreated: (created: ApiKey & { key: string }) => Promise<void>): HTMLFormElement {
  const name = h('input', { id: 'key-name', name: 'name', maxlength: 100, autocomplete: 'off', placeholder: 'e.g. staging deploys' });
  const scopeUse = h('input', { type: 'radio', name: 'scope', id: 'scope-use', value: 'use', checked: true });
  const scopeManage = h('input', { type: 'radio', name: 'scope', id: 'scope-manage', value: 'manage' });
  const mode = h('select', { id: 'key-access', name: 'access' },
    h('option', { value: 'unrestricted' }, 'Every ladder (unrestricted)'),
    h('option', { value: 'whitelist' }, 'Only these ladders (whitelist)'),
    h('option', { value: 'blacklist' }, 'All but these ladders (blacklist)'),
  );
  const ladders = h('textarea', { id: 'key-ladders', name: 'ladders', rows: 3, placeholder: 'author/ladder, one per line (author/* for all of an author’s)', 'aria-describedby': 'key-ladders-help' });
  const laddersField = h('div', { class: 'field', hidden: true },
    h('label', { for: 'key-ladders' }, 'Ladders'), ladders,
    h('p', { id: 'key-ladders-help', class: 'help' }, 'One author/ladder per line; author/* stands for all of that author’s ladders.'));
  const expires = h('input', { id: 'key-expires', name: 'expires', type: 'date', 'aria-describedby': 'key-expires-help' });
  const error = h('p', { class: 'error', role: 'alert', id: 'key-form-error' });
  const submit = h('button', { type: 'submit' }, 'Create key');
  mode.addEventListener('change', () => (laddersField.hidden = mode.value === 'unrestricted'));

  const form = h('form', { class: 'card narrow key-form', novalidate: true, 'aria-label': 'Create a key' },
    h('div', { class: 'field' }, h('label', { for: 'key-name' }, 'Name'), name),
    h('fieldset', { class: 'inline' }, h('legend', {}, 'Scope'),
      h('div', {}, scopeUse, h('label', { for: 'scope-use' }, 'use: models, ladders and runs')),
      h('div', {}, scopeManage, h('label', { for: 'scope-manage' }, 'manage: also keys, webhooks and the account'))),
    h('div', { class: 'field' }, h('label', { for: 'key-access' }, 'Ladder access'), mode),
    laddersField,
    h('div', { class: 'field' }, h('label', { for: 'key-expires' }, 'Expires (optional)'), expires,
      h('p', { id: 'key-expires-help', class: 'help' }, 'At the end of that day, your time. Leave empty for a key that does not expire.')),
    error, submit,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    const list = ladders.value.split(/[\s,]+/).filter(Boolean);
    if (mode.value !== 'unrestricted') {
      const bad = list.find((l) => !LADDER_RE.test(l));
      if (list.length === 0 || bad) {
        error.textContent = bad ? `“${bad}” is not author/ladder or author/*.` : 'List at least one ladder, or choose every ladder.';
        ladders.focus();
        return;
      }
    }
    const payload: Record<string, unknown> = {
      scope: scopeManage.checked ? 'manage' : 'use',
      access: { mode: mode.value, ladders: mode.value === 'unrestricted' ? [] : list },
    };
    if (name.value.trim()) payload.name = name.value.trim();
    if (expires.value) payload.expires_at = new Date(`${expires.value}T23:59:59.999`).toISOString();
    submit.disabled = true;
    try {
      const { body } = await api<ApiKey & { key: string }>('POST', '/v1/api-keys', payload);
      form.reset();
      laddersField.hidden = true;
      await onCreated(body);
    } catch (failure) {
      error.textContent = failure instanceof ApiFailure ? `Cannot create the key: ${failure.message}` : String(failure);
      (failure instanceof ApiFailure && failure.param === 'expires_at' ? expires : name).focus();
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
