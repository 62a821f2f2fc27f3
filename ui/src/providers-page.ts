// Providers: the catalog of vendors and the account's connections to them (/v1/providers), in
// routing order, with masked keys and each connection's health; add, update, reorder, remove.
import { api, ApiFailure } from './api.js';
import { confirmAction } from './confirm.js';
import { announce, h, replaceChildren } from './dom.js';
import { date, dateTime } from './format.js';

interface CatalogEntry { id: string; label: string; supportsEndpoint: boolean }
interface Connection {
  provider: string;
  label: string;
  priority: number;
  key_prefix: string;
  endpoint: string | null;
  updated_at: string;
  circuit_state: 'closed' | 'open' | 'half-open';
  last_error: { reason: string; status: number | null; at: string } | null;
}

/** Priorities the page writes when it reorders: room to slot one in between by hand. */
const STEP = 10;
const CIRCUIT: Record<Connection['circuit_state'], [string, string]> = {
  closed: ['✓ closed', 'Healthy: tried in its turn'],
  'half-open': ['◐ half-open', 'After a pause, one call is trying it again'],
  open: ['✗ open', 'Skipped for now after failing several times in a row'],
};

export function providersPage(main: HTMLElement): () => void {
  const body = h('tbody');
  const error = h('p', { class: 'error', role: 'alert' });
  const catalogList = h('ul', { class: 'catalog' });
  const table = h('table', { class: 'runs connections' },
    h('caption', { class: 'visually-hidden' }, 'Your provider connections, in the order they are tried'),
    h('thead', {}, h('tr', {}, ...['Order', 'Provider', 'Label', 'Key', 'Circuit', 'Last error', 'Updated', ''].map((c) => h('th', { scope: 'col' }, c)))),
    body,
  );
  const form = connectionForm(() => catalog, () => connections, async (message) => {
    announce(message);
    await load();
  });
  main.replaceChildren(
    h('h1', { tabindex: '-1' }, 'Providers'),
    h('p', { class: 'help' }, 'Your keys for each vendor. Calls try your connections in this order and fall back to the next one when one fails. Keys are never shown again, only their first characters.'),
    h('p', { class: 'help' }, 'Circuit: closed is healthy; open means the connection failed several times in a row and is skipped for a while; half-open means one call is trying it again. As seen by the server that answered.'),
    error,
    h('div', { class: 'table-scroll' }, table),
    h('h2', {}, 'Add or update a connection'), form.element,
    h('h2', {}, 'Catalog'),
    h('p', { class: 'help' }, 'Every vendor the service can call for you.'),
    catalogList,
  );

  let catalog: CatalogEntry[] = [];
  let connections: Connection[] = [];
  let stopped = false;

  async function load(): Promise<void> {
    try {
      const [cat, list] = await Promise.all([
        catalog.length ? Promise.resolve(catalog) : api<{ data: CatalogEntry[] }>('GET', '/v1/providers/catalog').then((r) => r.body.data),
        api<{ data: Connection[] }>('GET', '/v1/providers').then((r) => r.body.data),
      ]);
      if (stopped) return;
      catalog = cat;
      connections = list;
      error.textContent = '';
      render();
    } catch (failure) {
      if (!stopped) error.textContent = `Cannot load your connections: ${(failure as Error).message}`;
    }
  }

  const labelOf = (id: string) => catalog.find((c) => c.id === id)?.label ?? id;

  function render(): void {
    replaceChildren(body, ...connections.map(row));
    if (connections.length === 0) body.append(h('tr', {}, h('td', { colspan: 8, class: 'empty' }, 'No connections yet: add your first one below.')));
    const connected = new Set(connections.map((c) => c.provider));
    replaceChildren(catalogList, ...catalog.map((entry) => h('li', {},
      h('strong', {}, entry.label), h('span', { class: 'muted' }, ` ${entry.id}`),
      entry.supportsEndpoint ? h('span', { class: 'muted' }, ' · takes an endpoint') : null,
      connected.has(entry.id) ? h('span', { class: 'badge status-completed' }, '✓ connected') : null)));
    form.refresh();
  }

  function row(connection: Connection, index: number): HTMLTableRowElement {
    const name = labelOf(connection.provider);
    const up = h('button', { type: 'button', class: 'secondary small', 'aria-label': `Move ${name} up`, disabled: index === 0 }, '↑');
    const down = h('button', { type: 'button', class: 'secondary small', 'aria-label': `Move ${name} down`, disabled: index === connections.length - 1 }, '↓');
    const edit = h('button', { type: 'button', class: 'secondary small', 'aria-label': `Edit ${name}` }, 'Edit');
    const remove = h('button', { type: 'button', class: 'secondary small', 'aria-label': `Remove ${name}` }, 'Remove');
    up.addEventListener('click', () => void move(index, -1));
    down.addEventListener('click', () => void move(index, 1));
    edit.addEventListener('click', () => form.edit(connection));
    remove.addEventListener('click', async () => {
      if (!(await confirmAction(`Remove the ${name} connection?`, 'Calls stop using this key at once. The key is deleted from the service.', 'Remove connection'))) return;
      try {
        await api('DELETE', `/v1/providers/${encodeURIComponent(connection.provider)}`);
        announce(`${name} removed.`);
        await load();
      } catch (failure) {
        error.textContent = `Cannot remove ${name}: ${(failure as Error).message}`;
      }
    });
    const lastError = connection.last_error;
    return h('tr', { 'data-provider': connection.provider },
      h('td', {}, h('span', { class: 'order' }, `${index + 1}`), h('div', { class: 'muted small-text' }, `priority ${connection.priority}`)),
      h('td', {}, name, connection.endpoint ? h('div', { class: 'muted small-text' }, connection.endpoint) : null),
      h('td', {}, connection.label || h('span', { class: 'muted' }, '–')),
      h('td', {}, h('code', {}, `${connection.key_prefix}…`)),
      h('td', {}, h('span', { class: `badge circuit-${connection.circuit_state}`, title: CIRCUIT[connection.circuit_state][1] }, CIRCUIT[connection.circuit_state][0])),
      h('td', {}, ...(lastError
        ? [`${lastError.reason}${lastError.status ? ` (HTTP ${lastError.status})` : ''}`, h('div', { class: 'muted small-text' }, dateTime(lastError.at))]
        : [h('span', { class: 'muted' }, 'none')])),
      h('td', { title: dateTime(connection.updated_at) }, date(connection.updated_at)),
      h('td', { class: 'actions' }, up, down, edit, remove),
    );
  }

  /** Moves a connection one place and renumbers the order the page shows: 0, 10, 20, … */
  async function move(index: number, by: -1 | 1): Promise<void> {
    const order = [...connections];
    const [moved] = order.splice(index, 1);
    order.splice(index + by, 0, moved!);
    try {
      for (const [i, c] of order.entries()) {
        if (c.priority !== i * STEP) await api('PATCH', `/v1/providers/${encodeURIComponent(c.provider)}`, { priority: i * STEP });
      }
      announce(`${labelOf(moved!.provider)} is now number ${index + by + 1}.`);
    } catch (failure) {
      error.textContent = `Cannot reorder: ${(failure as Error).message}`;
    }
    await load();
    body.querySelector<HTMLButtonElement>(`tr[data-provider="${moved!.provider}"] button[aria-label^="Move ${labelOf(moved!.provider)} ${by < 0 ? 'up' : 'down'}"]:not([disabled])`)?.focus();
  }

  void load();
  return () => {
    stopped = true;
  };
}

/** The add-or-update form: a provider already connected is updated, and its key may be left empty. */
function connectionForm(catalog: () => CatalogEntry[], connections: () => Connection[], onSaved: (message: string) => Promise<void>) {
  const provider = h('select', { id: 'conn-provider', name: 'provider', required: true });
  const key = h('input', { id: 'conn-key', name: 'api_key', type: 'password', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'conn-key-help' });
  const keyHelp = h('p', { id: 'conn-key-help', class: 'help' });
  const label = h('input', { id: 'conn-label', name: 'label', maxlength: 64, autocomplete: 'off' });
  const endpoint = h('input', { id: 'conn-endpoint', name: 'endpoint', type: 'url', placeholder: 'https://…', autocomplete: 'off' });
  const endpointField = h('div', { class: 'field', hidden: true }, h('label', { for: 'conn-endpoint' }, 'Endpoint (base URL)'), endpoint);
  const error = h('p', { class: 'error', role: 'alert' });
  const submit = h('button', { type: 'submit' }, 'Save connection');
  const element = h('form', { class: 'card narrow', novalidate: true, 'aria-label': 'Add or update a connection' },
    h('div', { class: 'field' }, h('label', { for: 'conn-provider' }, 'Provider'), provider),
    h('div', { class: 'field' }, h('label', { for: 'conn-key' }, 'API key'), key, keyHelp),
    h('div', { class: 'field' }, h('label', { for: 'conn-label' }, 'Label (optional)'), label),
    endpointField, error, submit,
  );
  const existing = () => connections().find((c) => c.provider === provider.value);
  const sync = () => {
    const entry = catalog().find((c) => c.id === provider.value);
    endpointField.hidden = !entry?.supportsEndpoint;
    const current = existing();
    keyHelp.textContent = current ? `Connected (key ${current.key_prefix}…): leave empty to keep that key.` : 'Stored encrypted; never shown again.';
    submit.textContent = current ? 'Update connection' : 'Add connection';
  };
  provider.addEventListener('change', sync);

  element.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    const current = existing();
    const name = catalog().find((c) => c.id === provider.value)?.label ?? provider.value;
    if (!current && !key.value.trim()) {
      error.textContent = 'Enter the API key for this provider.';
      key.focus();
      return;
    }
    const fields: Record<string, string> = {};
    if (key.value.trim()) fields.api_key = key.value.trim();
    if (label.value.trim() || current) fields.label = label.value.trim();
    if (!endpointField.hidden && endpoint.value.trim()) fields.endpoint = endpoint.value.trim();
    submit.disabled = true;
    try {
      if (current) await api('PATCH', `/v1/providers/${encodeURIComponent(provider.value)}`, fields);
      else await api('POST', '/v1/providers', { provider: provider.value, ...fields });
      element.reset();
      await onSaved(current ? `${name} updated.` : `${name} added.`);
    } catch (failure) {
      error.textContent = failure instanceof ApiFailure ? `Cannot save ${name}: ${failure.message}` : String(failure);
      const wrong = failure instanceof ApiFailure ? element.querySelector<HTMLElement>(`[name="${failure.param}"]`) : null;
      (wrong ?? key).focus();
    } finally {
      submit.disabled = false;
    }
  });

  return {
    element,
    /** The options follow the catalog; the chosen provider stays chosen. */
    refresh(): void {
      // At first the first vendor not connected yet: adding is what the form is mostly for.
      const chosen = provider.value || (catalog().find((c) => !connections().some((k) => k.provider === c.id)) ?? catalog()[0])?.id;
      replaceChildren(provider, ...catalog().map((c) => h('option', { value: c.id, selected: c.id === chosen }, c.label)));
      sync();
    },
    edit(connection: Connection): void {
      provider.value = connection.provider;
      label.value = connection.label;
      endpoint.value = connection.endpoint ?? '';
      key.value = '';
      sync();
      key.focus();
    },
  };
}
