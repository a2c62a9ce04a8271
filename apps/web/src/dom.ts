/// <reference lib="dom" />
// The reference gives these browser files DOM types when the repository's Node-oriented
// tsconfig checks them too (apps/web/tsconfig.json is the app's own, DOM-only check).

/**
 * Building DOM without a framework. `h()` creates an element from a tag, properties and
 * children; text always goes in as text nodes, never as HTML, so nothing the gateway or the
 * model sends can inject markup.
 */

export type Child = Node | string | number | null | undefined | false | Child[];

type Props = Record<string, unknown> & { class?: string };

/** Set as live properties: attributes would only set the initial value. */
const PROPERTIES = new Set(['value', 'checked', 'disabled', 'hidden', 'selected', 'readOnly']);

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      element.addEventListener(key.slice(2).toLowerCase(), value as EventListener);
    } else if (key === 'class') {
      element.className = String(value);
    } else if (PROPERTIES.has(key)) {
      (element as unknown as Record<string, unknown>)[key] = value;
    } else {
      element.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else
      parent.appendChild(
        typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child,
      );
  }
}

/** Replace an element's content. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

// ── Formatting ───────────────────────────────────────────────────────────────────

export function formatTime(ts: number | undefined): string {
  if (!ts) return '';
  const date = new Date(ts);
  const sameDay = date.toDateString() === new Date().toDateString();
  return sameDay
    ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatAgo(ts: number | undefined, now = Date.now()): string {
  if (!ts) return 'never';
  const seconds = Math.round((now - ts) / 1000);
  if (seconds < 45) return 'just now';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}

export function formatDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

// ── Shared pieces ────────────────────────────────────────────────────────────────

/** A random id that also works outside secure contexts (where crypto.randomUUID is missing). */
export function randomId(bytes = 12): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) => byte.toString(16).padStart(2, '0')).join(
    '',
  );
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An error box for a view or a panel (announced to screen readers), with Retry when it can be retried. */
export function errorBox(error: unknown, retry?: () => void): HTMLElement {
  return h(
    'div',
    { class: 'notice error', role: 'alert' },
    h('span', null, errorMessage(error)),
    retry ? h('button', { type: 'button', class: 'retry', onclick: retry }, 'Retry') : null,
  );
}

/** What a panel shows while its first request runs. */
export function loadingBox(label = 'Loading…'): HTMLElement {
  return h(
    'div',
    { class: 'loading', role: 'status' },
    h('span', { class: 'spinner', 'aria-hidden': 'true' }),
    h('span', null, label),
  );
}

/**
 * Fill `box` from `load`, the one loading pattern of every view: a spinner while the first
 * request runs, `aria-busy` while a refresh runs (the shown data stays, so periodic refreshes
 * do not flicker), and an error box with Retry when a request fails. A slow answer never
 * overwrites a newer one. Returns the function that (re)loads.
 */
export function loader<T>(
  box: HTMLElement,
  load: () => Promise<T>,
  render: (value: T) => void,
  label?: string,
): () => Promise<void> {
  let latest = 0;
  let loaded = false;
  box.dataset.loader = '';
  const run = async (): Promise<void> => {
    const ticket = ++latest;
    box.setAttribute('aria-busy', 'true');
    if (!loaded) replace(box, loadingBox(label));
    try {
      const value = await load();
      if (ticket !== latest) return;
      loaded = true;
      render(value);
    } catch (error) {
      if (ticket !== latest) return;
      loaded = false;
      replace(
        box,
        errorBox(error, () => {
          // The Retry button is about to go: keep keyboard focus in the panel rather than on the page.
          box.tabIndex = -1;
          box.focus({ preventScroll: true });
          void run();
        }),
      );
    } finally {
      if (ticket === latest) box.removeAttribute('aria-busy');
    }
  };
  return run;
}

export interface Column<T> {
  /** The header, and each cell's label when rows become cards on narrow screens. */
  label: string;
  cell(row: T): Child;
  class?: string;
  /** A header only screen readers read (an actions column); its cards show no label. */
  hiddenLabel?: boolean;
}

/**
 * A table that reflows into cards on narrow screens: every cell carries its column's label
 * (`data-label`), which the stylesheet shows beside the value once the header row is gone.
 */
export function dataTable<T>(options: {
  caption: string;
  columns: Array<Column<T>>;
  rows: T[];
  rowProps?: (row: T) => Props;
}): HTMLTableElement {
  const { columns } = options;
  return h(
    'table',
    { class: 'data-table' },
    h('caption', { class: 'sr-only' }, options.caption),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        columns.map((column) =>
          h(
            'th',
            { scope: 'col', class: column.class },
            column.hiddenLabel ? h('span', { class: 'sr-only' }, column.label) : column.label,
          ),
        ),
      ),
    ),
    h(
      'tbody',
      null,
      options.rows.map((row) =>
        h(
          'tr',
          options.rowProps?.(row) ?? null,
          columns.map((column) =>
            h(
              'td',
              { class: column.class, 'data-label': column.hiddenLabel ? '' : column.label },
              h('div', { class: 'cell' }, column.cell(row)),
            ),
          ),
        ),
      ),
    ),
  );
}

export function badge(text: string, tone: 'ok' | 'warn' | 'bad' | 'muted' | 'info' = 'muted'): HTMLElement {
  return h('span', { class: `badge ${tone}` }, text);
}

/** A page heading; views focus it on navigation so screen readers land on it. */
export function pageHeader(title: string, ...actions: Child[]): HTMLElement {
  return h(
    'header',
    { class: 'page-header' },
    h('h1', { tabindex: '-1' }, title),
    h('div', { class: 'actions' }, ...actions),
  );
}
