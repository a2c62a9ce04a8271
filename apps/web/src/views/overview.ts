/** Overview: is the gateway healthy, what runs, who is connected, and who this browser is. */
import { every, onReconnect, type View } from '../app.js';
import { badge, formatBytes, formatDuration, h, loader, pageHeader, replace } from '../dom.js';

interface Health {
  status: 'ok' | 'degraded';
  version: string;
  uptimeMs: number;
  connections: number;
  plugins: { total: number; enabled: number; loaded: number; failed: Array<{ id: string; error: string }> };
  memory: { rssBytes: number; heapUsedBytes: number };
  eventLoopDelayMs: number;
}

interface Status {
  pid: number;
  node: string;
  platform: string;
  listening: { url: string; bind: string } | null;
  auth: { mode: string | null };
  connections: { total: number; operators: number; nodes: number };
  lanes?: Array<{ lane: string; active: number; queued: number }>;
  stateDir?: string;
  configPath?: string;
  logFile?: string;
}

function card(title: string, ...rows: Array<[string, Node | string] | null>): HTMLElement {
  return h(
    'section',
    { class: 'card' },
    h('h2', null, title),
    h(
      'dl',
      null,
      rows
        .filter((row): row is [string, Node | string] => row !== null)
        .map(([term, value]) => [h('dt', null, term), h('dd', null, value)]),
    ),
  );
}

function lanesSummary(lanes: NonNullable<Status['lanes']>): string {
  const busy = lanes.filter((lane) => lane.active > 0 || lane.queued > 0);
  if (!busy.length) return 'idle';
  return busy.map((lane) => `${lane.lane}: ${lane.active} running, ${lane.queued} queued`).join(' · ');
}

export const overviewView: View = {
  title: 'Overview',
  mount(root, app) {
    const { gw } = app;
    const body = h('div', { class: 'cards' });
    const load = loader(
      body,
      () => Promise.all([gw.call<Health>('health'), gw.call<Status>('status')]),
      ([health, status]) => render(health, status),
      'Loading status…',
    );
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('Overview', h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
        body,
      ),
    );

    function render(health: Health, status: Status): void {
      const hello = gw.hello;
      const failed = health.plugins.failed;
      replace(
        body,
        card(
          'Gateway',
          ['Status', health.status === 'ok' ? badge('Healthy', 'ok') : badge('Degraded', 'warn')],
          ['Version', health.version],
          ['Uptime', formatDuration(health.uptimeMs)],
          ['Listening', status.listening ? `${status.listening.url} (${status.listening.bind})` : 'not listening'],
          ['Auth', status.auth.mode ?? 'unknown'],
          ['Process', `pid ${status.pid} · Node ${status.node} · ${status.platform}`],
        ),
        card(
          'Load',
          [
            'Connections',
            `${status.connections.total} (${status.connections.operators} operators, ${status.connections.nodes} nodes)`,
          ],
          [
            'Memory',
            `${formatBytes(health.memory.rssBytes)} resident, ${formatBytes(health.memory.heapUsedBytes)} heap`,
          ],
          ['Event loop delay', `${health.eventLoopDelayMs} ms (p99)`],
          status.lanes ? ['Work', lanesSummary(status.lanes)] : null,
        ),
        card(
          'Plugins',
          [
            'Loaded',
            `${health.plugins.loaded} of ${health.plugins.enabled} enabled (${health.plugins.total} installed)`,
          ],
          [
            'Failed',
            failed.length
              ? h(
                  'ul',
                  { class: 'plain-list' },
                  failed.map((plugin) => h('li', null, h('strong', null, plugin.id), ': ', plugin.error)),
                )
              : badge('None', 'ok'),
          ],
          ['', h('a', { href: '#/plugins' }, 'Manage plugins')],
        ),
        card(
          'This browser',
          ['Scopes', gw.scopes.join(', ') || 'none'],
          [
            'Device',
            app.identity
              ? h('code', { title: app.identity.deviceId }, `${app.identity.deviceId.slice(0, 16)}…`)
              : 'no device key (this browser cannot sign; admitted as a local client)',
          ],
          ['WebChat id', h('code', null, app.clientId)],
          ['Protocol', String(hello?.protocol ?? '?')],
        ),
        status.stateDir
          ? card(
              'Files',
              ['State', h('code', null, status.stateDir)],
              ['Config', h('code', null, status.configPath ?? '')],
              ['Log', h('code', null, status.logFile ?? '')],
            )
          : null,
      );
    }

    const cleanups = [
      gw.on<Health>('health', () => void load()),
      onReconnect(app, () => void load()),
      every(10_000, () => void load()),
    ];
    void load();
    return () => cleanups.forEach((cleanup) => cleanup());
  },
};
