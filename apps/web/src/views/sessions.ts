/** Sessions: every conversation the agents keep, newest first; open one in chat, reset or delete it. */
import { onReconnect, type View } from '../app.js';
import { badge, dataTable, errorMessage, formatAgo, h, loader, pageHeader, replace } from '../dom.js';

interface SessionRow {
  key: string;
  agentId: string;
  label?: string;
  updatedAt: number;
  lastChannel?: string;
  channel?: string;
  lastModel?: string;
  model?: string;
  totalTokens?: number;
  hasActiveRun?: boolean;
}

export const sessionsView: View = {
  title: 'Sessions',
  mount(root, app) {
    const { gw } = app;
    let rows: SessionRow[] = [];
    const filter = h('input', {
      type: 'search',
      id: 'session-filter',
      placeholder: 'Filter by key, label or channel',
      oninput: () => render(),
    });
    const body = h('div', { class: 'table-wrap' });
    const load = loader(
      body,
      () => gw.call<{ sessions: SessionRow[] }>('sessions.list', {}),
      (result) => {
        rows = result.sessions;
        render();
      },
      'Loading sessions…',
    );
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('Sessions', h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
        h('div', { class: 'toolbar' }, h('label', { for: 'session-filter' }, 'Filter'), filter),
        body,
      ),
    );

    async function change(
      row: SessionRow,
      method: 'sessions.reset' | 'sessions.delete',
      question: string,
    ): Promise<void> {
      if (!window.confirm(question)) return;
      try {
        await gw.call(method, { key: row.key });
        app.toast(method === 'sessions.reset' ? `Started a new session under ${row.key}.` : `Deleted ${row.key}.`);
        await load();
      } catch (error) {
        app.toast(errorMessage(error), 'error');
      }
    }

    function render(): void {
      const query = filter.value.trim().toLowerCase();
      const shown = rows.filter(
        (row) =>
          !query ||
          [row.key, row.label, row.lastChannel, row.channel].some((value) => value?.toLowerCase().includes(query)),
      );
      if (!rows.length)
        return replace(body, h('p', { class: 'empty' }, 'No sessions yet. Say something in Chat to start one.'));
      const admin = gw.can('operator.admin');
      replace(
        body,
        dataTable({
          caption: 'Sessions',
          rows: shown,
          columns: [
            {
              label: 'Session',
              cell: (row) => [
                row.label ? h('div', null, row.label) : null,
                h('code', { class: 'key' }, row.key),
                row.hasActiveRun ? badge('replying', 'info') : null,
              ],
            },
            { label: 'Channel', cell: (row) => row.lastChannel ?? row.channel ?? '—' },
            { label: 'Model', cell: (row) => row.lastModel ?? row.model ?? '—' },
            {
              label: 'Tokens',
              class: 'num',
              cell: (row) => (row.totalTokens ? row.totalTokens.toLocaleString() : '—'),
            },
            { label: 'Updated', cell: (row) => formatAgo(row.updatedAt) },
            {
              label: 'Actions',
              hiddenLabel: true,
              cell: (row) =>
                h(
                  'div',
                  { class: 'row-actions' },
                  h('a', { class: 'button', href: `#/chat?session=${encodeURIComponent(row.key)}` }, 'Open'),
                  admin
                    ? h(
                        'button',
                        {
                          type: 'button',
                          onclick: () =>
                            void change(
                              row,
                              'sessions.reset',
                              `Start over in ${row.key}? The assistant forgets this conversation (the transcript is kept).`,
                            ),
                        },
                        'Reset',
                      )
                    : null,
                  admin
                    ? h(
                        'button',
                        {
                          type: 'button',
                          class: 'danger',
                          onclick: () => void change(row, 'sessions.delete', `Delete ${row.key} and its transcript?`),
                        },
                        'Delete',
                      )
                    : null,
                ),
            },
          ],
        }),
        shown.length === 0 ? h('p', { class: 'empty' }, 'No session matches the filter.') : null,
      );
    }

    const stopWatching = onReconnect(app, () => void load());
    void load();
    return stopWatching;
  },
};
