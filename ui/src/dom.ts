// A few lines instead of a framework: build elements, announce changes to screen readers.

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

/** h('button', {type: 'button', onclick: fn}, 'Cancel'); false/null attributes and children are left out. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** Says `message` through the page's polite live region. */
export function announce(message: string): void {
  const region = document.getElementById('announcer');
  if (!region) return;
  // Clearing first makes a repeated message be read again.
  region.textContent = '';
  window.setTimeout(() => (region.textContent = message), 50);
}

export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number): (...args: A) => void {
  let timer: number | undefined;
  return (...args: A) => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => fn(...args), ms);
  };
}

/** A status shown as an icon and a word, never by colour alone. */
export function statusBadge(status: string): HTMLElement {
  const icons: Record<string, string> = { pending: '◷', running: '▶', completed: '✓', failed: '✗', cancelled: '⊘' };
  return h('span', { class: `badge status-${status}` }, h('span', { 'aria-hidden': 'true' }, icons[status] ?? '•'), ` ${status}`);
}
