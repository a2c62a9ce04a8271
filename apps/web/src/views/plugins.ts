/**
 * Plugins: what is installed, what runs, what failed and why; turn plugins on and off.
 *
 * `plugins.list` describes the plugins as the gateway started them. Turning one on or off
 * writes the config and takes effect at the next restart, so the config's
 * `plugins.entries.<id>.enabled` is read too, to show what the restart will change.
 */
import { onReconnect, type View } from '../app.js';
import { badge, dataTable, errorMessage, h, loader, pageHeader, replace } from '../dom.js';

interface PluginSummary {
  id: string;
  name: string;
  version: string | null;
  description: string | null;
  origin: string;
  enabled: boolean;
  status: 'ready' | 'active' | 'disabled' | 'failed';
  reason: string;
  error: string | null;
  warnings: string[];
  capabilities: Record<string, string[]>;
}

type Filter = 'all' | 'on' | 'off' | 'failed';

const STATUS: Record<PluginSummary['status'], [string, 'ok' | 'info' | 'muted' | 'bad']> = {
  active: ['Running', 'ok'],
  ready: ['On (loads when used)', 'info'],
  disabled: ['Off', 'muted'],
  failed: ['Failed', 'bad'],
};

export const pluginsView: View = {
  title: 'Plugins',
  mount(root, app) {
    const { gw } = app;
    let plugins: PluginSummary[] = [];
    /** What config says for each plugin id that has an explicit entry. */
    let configured: Record<string, boolean> = {};
    let filter: Filter = 'all';
    const restartNote = h('div', { class: 'notice info', role: 'status', hidden: true });
    const filters = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Show' });
    const body = h('div', { class: 'table-wrap' });
    const load = loader(
      body,
      () =>
        Promise.all([
          gw.call<{ plugins: PluginSummary[] }>('plugins.list'),
          gw
            .call<{ config: { plugins?: { entries?: Record<string, { enabled?: boolean }> } } }>('config.get')
            .catch(() => undefined),
        ]),
      ([list, config]) => {
        plugins = list.plugins;
        configured = Object.fromEntries(
          Object.entries(config?.config.plugins?.entries ?? {})
            .filter(([, entry]) => typeof entry?.enabled === 'boolean')
            .map(([id, entry]) => [id, entry.enabled as boolean]),
        );
        render();
      },
      'Loading plugins…',
    );
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('Plugins', h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
        restartNote,
        filters,
        body,
      ),
    );

    /** On or off after the next restart. */
    function wanted(plugin: PluginSummary): boolean {
      return configured[plugin.id] ?? plugin.enabled;
    }

    async function toggle(plugin: PluginSummary): Promise<void> {
      const on = !wanted(plugin);
      // These two serve this very page: off, the next restart leaves it unreachable.
      const servesThisPage = plugin.id === 'gateway' || plugin.id === 'channel-webchat';
      if (
        !on &&
        servesThisPage &&
        !window.confirm(
          `Turn off ${plugin.name}? After the next restart this page will no longer be reachable; turn it back on with: claw plugins enable ${plugin.id}`,
        )
      )
        return;
      try {
        const result = await gw.act<{ notes: string[] }>(on ? 'plugins.enable' : 'plugins.disable', { id: plugin.id });
        const notes = result.notes.length ? ` (${result.notes.join('; ')})` : '';
        restartNote.textContent = `${plugin.name} will be ${on ? 'on' : 'off'} after the gateway restarts${notes}.`;
        restartNote.hidden = false;
        await load();
      } catch (error) {
        app.toast(`Could not turn ${plugin.name} ${on ? 'on' : 'off'}: ${errorMessage(error)}`, 'error');
      }
    }

    function render(): void {
      const counts: Record<Filter, number> = {
        all: plugins.length,
        on: plugins.filter((plugin) => plugin.enabled).length,
        off: plugins.filter((plugin) => !plugin.enabled).length,
        failed: plugins.filter((plugin) => plugin.status === 'failed').length,
      };
      replace(
        filters,
        (['all', 'on', 'off', 'failed'] as const).map((name) =>
          h(
            'button',
            { type: 'button', 'aria-pressed': String(filter === name), onclick: () => ((filter = name), render()) },
            `${name[0]!.toUpperCase()}${name.slice(1)} (${counts[name]})`,
          ),
        ),
      );
      const shown = plugins.filter(
        (plugin) =>
          filter === 'all' ||
          (filter === 'on' ? plugin.enabled : filter === 'off' ? !plugin.enabled : plugin.status === 'failed'),
      );
      const admin = gw.can('operator.admin');
      replace(
        body,
        dataTable({
          caption: 'Plugins',
          rows: shown,
          rowProps: (plugin) => ({ 'data-plugin': plugin.id }),
          columns: [
            {
              label: 'Plugin',
              cell: (plugin) => [
                h('strong', null, plugin.name),
                ' ',
                h('code', null, plugin.id),
                plugin.version ? h('span', { class: 'muted' }, ` ${plugin.version}`) : null,
                plugin.description ? h('p', { class: 'muted small' }, plugin.description) : null,
              ],
            },
            {
              label: 'Status',
              cell: (plugin) => {
                const [label, tone] = STATUS[plugin.status];
                const pending = wanted(plugin) !== plugin.enabled;
                return [
                  badge(label, tone),
                  pending ? [' ', badge(wanted(plugin) ? 'On after restart' : 'Off after restart', 'warn')] : null,
                ];
              },
            },
            {
              label: 'Why',
              cell: (plugin) => [
                plugin.error ? h('p', { class: 'error-text' }, plugin.error) : h('span', null, plugin.reason),
                plugin.warnings.map((warning) => h('p', { class: 'warn-text small' }, warning)),
                h('p', { class: 'muted small' }, plugin.origin),
              ],
            },
            {
              label: 'Provides',
              class: 'small',
              cell: (plugin) =>
                Object.entries(plugin.capabilities).map(([kind, names]) =>
                  h('div', null, h('span', { class: 'muted' }, `${kind}: `), names.join(', ')),
                ),
            },
            {
              label: 'Actions',
              hiddenLabel: true,
              cell: (plugin) =>
                admin
                  ? h(
                      'button',
                      {
                        type: 'button',
                        class: wanted(plugin) ? '' : 'primary',
                        'aria-label': `${wanted(plugin) ? 'Disable' : 'Enable'} ${plugin.name}`,
                        onclick: () => void toggle(plugin),
                      },
                      wanted(plugin) ? 'Disable' : 'Enable',
                    )
                  : null,
            },
          ],
        }),
      );
    }

    const stopWatching = onReconnect(app, () => void load());
    void load();
    return stopWatching;
  },
};
