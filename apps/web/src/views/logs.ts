/**
 * Logs: the gateway's log file, live. `logs.tail` returns the last lines and a cursor;
 * asking again with the cursor returns what was written since, once a second.
 */
import { onReconnect, type View } from '../app.js';
import { errorBox, h, loadingBox, pageHeader, replace } from '../dom.js';
import { loadJson, saveJson } from '../storage.js';

interface Tail {
  file: string;
  cursor: number;
  lines: string[];
  reset: boolean;
}

interface Line {
  time?: number;
  level: string;
  scope?: string;
  text: string;
}

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const RANK: Record<string, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, fatal: 5 };
const MAX_LINES = 2000;
const POLL_MS = 1000;
const SETTINGS_KEY = 'claw.logs.settings';

/** The gateway writes pino JSON lines; anything else is shown as it is. */
function parse(raw: string): Line {
  try {
    const record = JSON.parse(raw) as Record<string, unknown>;
    const { level, time, msg, plugin, pid: _pid, hostname: _host, ...rest } = record;
    const extra = Object.entries(rest).map(
      ([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`,
    );
    return {
      time: typeof time === 'number' ? time : undefined,
      level: typeof level === 'number' ? (LEVELS[level] ?? String(level)) : String(level ?? 'info'),
      scope: typeof plugin === 'string' ? plugin : undefined,
      text: [String(msg ?? ''), ...extra].join(' '),
    };
  } catch {
    return { level: 'info', text: raw };
  }
}

export const logsView: View = {
  title: 'Logs',
  mount(root, app) {
    const { gw } = app;
    const settings = loadJson(SETTINGS_KEY, { level: 'info', follow: true });
    let cursor: number | undefined;
    let timer: number | undefined;
    let stopped = false;
    const lines: Line[] = [];

    const file = h('p', { class: 'muted' });
    const level = h(
      'select',
      { id: 'log-level', onchange: () => (save(), render()) },
      Object.keys(RANK).map((name) =>
        h('option', { value: name, selected: name === settings.level }, `${name} and above`),
      ),
    );
    const search = h('input', {
      type: 'search',
      id: 'log-search',
      placeholder: 'Text to find',
      oninput: () => render(),
    });
    const follow = h('input', {
      type: 'checkbox',
      id: 'log-follow',
      checked: settings.follow,
      onchange: () => (save(), follow.checked && scrollDown()),
    });
    const output = h('ol', { class: 'log-lines', 'aria-label': 'Log lines' });
    const status = h('div', { 'aria-busy': 'true' }, loadingBox('Loading the log…'));
    const scroller = h('div', { class: 'log-scroll', tabindex: '0' }, output);
    replace(
      root,
      h(
        'div',
        { class: 'page page-fill' },
        pageHeader('Logs', h('button', { type: 'button', onclick: () => ((lines.length = 0), render()) }, 'Clear')),
        file,
        h(
          'div',
          { class: 'toolbar' },
          h('label', { for: 'log-level' }, 'Level'),
          level,
          h('label', { for: 'log-search' }, 'Find'),
          search,
          h('label', { class: 'check' }, follow, ' Follow new lines'),
        ),
        status,
        scroller,
      ),
    );

    function save(): void {
      settings.level = level.value;
      settings.follow = follow.checked;
      saveJson(SETTINGS_KEY, settings);
    }

    function scrollDown(): void {
      scroller.scrollTop = scroller.scrollHeight;
    }

    function visible(line: Line): boolean {
      const query = search.value.trim().toLowerCase();
      return (
        (RANK[line.level] ?? 2) >= (RANK[level.value] ?? 0) &&
        (!query || line.text.toLowerCase().includes(query) || (line.scope ?? '').includes(query))
      );
    }

    function row(line: Line): HTMLElement {
      return h(
        'li',
        { class: `log ${line.level}` },
        line.time
          ? h('time', { datetime: new Date(line.time).toISOString() }, new Date(line.time).toLocaleTimeString())
          : null,
        h('span', { class: 'level' }, line.level.toUpperCase()),
        line.scope ? h('span', { class: 'scope' }, `[${line.scope}]`) : null,
        h('span', { class: 'text' }, line.text),
      );
    }

    function render(): void {
      replace(output, lines.filter(visible).map(row));
      if (follow.checked) scrollDown();
    }

    function add(raw: string[]): void {
      const fresh = raw.filter((text) => text.trim()).map(parse);
      lines.push(...fresh);
      const overflow = lines.length - MAX_LINES;
      if (overflow > 0) {
        lines.splice(0, overflow);
        render();
        return;
      }
      output.append(...fresh.filter(visible).map(row));
      if (follow.checked) scrollDown();
    }

    let polling = false;
    async function poll(): Promise<void> {
      if (stopped || polling) return;
      polling = true;
      clearTimeout(timer);
      try {
        const tail = await gw.call<Tail>('logs.tail', cursor === undefined ? { limit: 500 } : { cursor });
        if (tail.reset) lines.length = 0;
        file.textContent = tail.file;
        cursor = tail.cursor;
        add(tail.lines);
        if (tail.reset) render();
        replace(status, lines.length ? null : h('p', { class: 'empty' }, 'Nothing logged yet.'));
      } catch (error) {
        // Polling goes on by itself; Retry asks at once.
        replace(
          status,
          errorBox(error, () => void poll()),
        );
      } finally {
        polling = false;
        status.removeAttribute('aria-busy');
        if (!stopped) timer = window.setTimeout(() => void poll(), POLL_MS);
      }
    }

    const stopWatching = onReconnect(app, () => void poll());
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
      stopWatching();
    };
  },
};
