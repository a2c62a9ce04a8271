/**
 * MCP: the MCP servers in the config (`mcp.servers`, from config.get, secrets already redacted
 * there), each with how it starts, its tool filter and timeouts, and — from the mcp plugin's
 * `mcp.status` — whether the gateway has it running, how many tools it gave and its last error.
 * An operator with admin rights turns a server off or on (`config.patch` of its `enabled`,
 * against the hash just read, as the Config page writes), probes it (`mcp.probe`: connect now
 * and list its tools) and retires the gateway's running servers (`mcp.reload`).
 *
 * Header and environment values never show, only their names; a launch line masks secrets
 * (mcp-launch.ts) when the plugin's own, already masked, is not there.
 */
import { onReconnect, type View } from '../app.js';
import { badge, errorBox, errorMessage, h, loadingBox, pageHeader, replace, type Child } from '../dom.js';
import { launchOf, transportOf, type ServerConfig } from './mcp-launch.js';

/** A server as `mcp.status` tells it: OpenClaw's `mcp status --json` row plus the gateway's runtime. */
interface StatusServer {
  name: string;
  ok: boolean;
  transport?: string;
  launch?: string;
  /** Why the definition cannot start (it does not resolve). */
  error?: string;
  runtime?: {
    state: 'idle' | 'starting' | 'connected' | 'crashed' | 'disabled';
    toolCount: number;
    restarts: number;
    lastError?: string;
    sandboxInstances?: number;
  };
}

/** `mcp.probe`: OpenClaw's `mcp probe --json` shape plus `ok` and the failure as one sentence. */
interface ProbeServer {
  launch: string;
  tools: number;
  codexApprovalMode: string;
  approvalHint?: string;
  filteredTools?: number;
  resources?: true;
  prompts?: true;
  listChanged?: Record<string, boolean>;
  warnings?: string[];
}

interface ProbeAnswer {
  ok: boolean;
  issue?: string;
  servers: Record<string, ProbeServer>;
  tools: string[];
  diagnostics: Array<{ serverName: string; message: string }>;
}

type Runtime = NonNullable<StatusServer['runtime']>;
const STATE: Record<Runtime['state'], [label: string, tone: 'ok' | 'bad' | 'muted' | 'info']> = {
  connected: ['Running', 'ok'],
  starting: ['Starting', 'info'],
  crashed: ['Crashed', 'bad'],
  // Servers start on first use: not running yet is the normal state of a fresh gateway.
  idle: ['Not started', 'muted'],
  disabled: ['Off', 'muted'],
};

function filterText(filter: ServerConfig['toolFilter']): string | undefined {
  const parts = [
    filter?.include?.length ? `only ${filter.include.join(', ')}` : '',
    filter?.exclude?.length ? `not ${filter.exclude.join(', ')}` : '',
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : undefined;
}

/** A name as a shell word, so a copied command works whatever the name. */
function shellWord(name: string): string {
  return /^[\w-]+$/.test(name) ? name : `'${name.replaceAll("'", `'\\''`)}'`;
}

export const mcpView: View = {
  title: 'MCP',
  mount(root, app) {
    const { gw } = app;
    const admin = gw.can('operator.admin');
    // The mcp plugin answers the live methods; without it the page still shows the config.
    const live = () => gw.hello?.features.methods.includes('mcp.status') ?? false;
    const probes = new Map<string, HTMLElement>();
    const summary = h('p', { class: 'muted small' });
    const body = h('div', { class: 'stack', 'aria-busy': 'true' }, loadingBox());
    const reload = h(
      'button',
      { type: 'button', hidden: true, onclick: () => void reloadRuntimes() },
      'Restart servers',
    );
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('MCP', reload, h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
        summary,
        body,
        h(
          'p',
          { class: 'muted small' },
          'Add, change or remove servers from a shell: ',
          h('code', null, 'claw mcp add <name> --command <program> --arg …'),
          ', ',
          h('code', null, 'claw mcp configure <name>'),
          ', ',
          h('code', null, 'claw mcp unset <name>'),
          '; check them with ',
          h('code', null, 'claw mcp doctor --probe'),
          '.',
        ),
      ),
    );

    async function load(): Promise<void> {
      body.setAttribute('aria-busy', 'true');
      reload.hidden = !(admin && live());
      try {
        const [snapshot, status] = await Promise.all([
          gw.call<{ config: { mcp?: { servers?: Record<string, ServerConfig> } } }>('config.get'),
          live()
            ? gw.call<{ servers: StatusServer[] }>('mcp.status', {}).catch((error: unknown) => error as Error)
            : Promise.resolve(undefined),
        ]);
        render(snapshot.config.mcp?.servers ?? {}, status);
      } catch (error) {
        replace(
          body,
          errorBox(error, () => void load()),
        );
      } finally {
        body.removeAttribute('aria-busy');
      }
    }

    function render(servers: Record<string, ServerConfig>, status: { servers: StatusServer[] } | Error | undefined) {
      const names = Object.keys(servers).sort();
      const enabled = names.filter((name) => servers[name]!.enabled !== false).length;
      const filtered = names.filter((name) => filterText(servers[name]!.toolFilter)).length;
      summary.textContent = `${names.length} server${names.length === 1 ? '' : 's'} configured, ${enabled} enabled, ${filtered} with a tool filter.`;
      const byName = new Map(
        (status instanceof Error || !status ? [] : status.servers).map((row) => [row.name, row] as const),
      );
      replace(
        body,
        status instanceof Error
          ? h('div', { class: 'notice warn', role: 'status' }, `Live state unavailable: ${errorMessage(status)}`)
          : !status
            ? h(
                'div',
                { class: 'notice info', role: 'status' },
                'The mcp plugin is not loaded on this gateway: servers are listed as configured, none runs.',
              )
            : null,
        names.length
          ? h(
              'div',
              { class: 'cards' },
              names.map((name) => card(name, servers[name]!, byName.get(name))),
            )
          : h('p', { class: 'empty' }, 'No MCP servers configured.'),
      );
    }

    function card(name: string, server: ServerConfig, status: StatusServer | undefined): HTMLElement {
      const on = server.enabled !== false;
      const runtime = status?.runtime;
      const result = probes.get(name) ?? h('div', { class: 'mcp-probe', 'aria-live': 'polite' });
      probes.set(name, result);
      const row = (label: string, value: Child) => (value ? [h('dt', null, label), h('dd', null, value)] : null);
      const timeouts = [
        server.connectionTimeoutMs !== undefined ? `connect ${server.connectionTimeoutMs} ms` : '',
        server.requestTimeoutMs !== undefined ? `request ${server.requestTimeoutMs} ms` : '',
      ]
        .filter(Boolean)
        .join(', ');
      const cwd = server.cwd ?? server.workingDirectory;
      return h(
        'article',
        { class: 'card mcp-server', 'data-server': name, 'aria-label': name },
        h(
          'header',
          { class: 'job-head' },
          h('h2', null, name),
          badge(on ? 'Enabled' : 'Disabled', on ? 'ok' : 'muted'),
          runtime && runtime.state !== 'disabled' ? badge(...(STATE[runtime.state] ?? [runtime.state, 'muted'])) : null,
        ),
        h(
          'dl',
          null,
          row('Transport', status?.transport ?? transportOf(server)),
          row('Launch', h('code', { class: 'mcp-launch' }, status?.launch ?? launchOf(server))),
          row('Directory', cwd ? h('code', null, cwd) : null),
          row('Headers', server.headers ? Object.keys(server.headers).join(', ') : null),
          row('Environment', server.env ? Object.keys(server.env).join(', ') : null),
          row('Tool filter', filterText(server.toolFilter)),
          row('Timeouts', timeouts),
          row('Approval', server.codex?.defaultToolsApprovalMode),
          row('Parallel calls', server.supportsParallelToolCalls ? 'yes' : null),
          runtime && runtime.state !== 'idle' && runtime.state !== 'disabled'
            ? row(
                'Running',
                [
                  `${runtime.toolCount} tool${runtime.toolCount === 1 ? '' : 's'}`,
                  runtime.restarts ? `restarted ${runtime.restarts}×` : '',
                  runtime.sandboxInstances ? `${runtime.sandboxInstances} in sandboxes` : '',
                ]
                  .filter(Boolean)
                  .join(', '),
              )
            : null,
          status?.error ? row('Problem', h('span', { class: 'warn-text' }, status.error)) : null,
          runtime?.lastError ? row('Last error', h('span', { class: 'warn-text' }, runtime.lastError)) : null,
        ),
        admin
          ? h(
              'div',
              { class: 'row-actions' },
              h(
                'button',
                {
                  type: 'button',
                  'aria-label': `${on ? 'Disable' : 'Enable'} ${name}`,
                  onclick: (event: Event) => void setEnabled(name, !on, event.currentTarget as HTMLButtonElement),
                },
                on ? 'Disable' : 'Enable',
              ),
              live() && on
                ? h(
                    'button',
                    {
                      type: 'button',
                      'aria-label': `Probe ${name}`,
                      onclick: (event: Event) => void probe(name, event.currentTarget as HTMLButtonElement),
                    },
                    'Probe',
                  )
                : null,
            )
          : null,
        on ? result : null,
        h('p', { class: 'muted small' }, h('code', null, `claw mcp probe ${shellWord(name)}`)),
      );
    }

    async function setEnabled(name: string, enabled: boolean, button: HTMLButtonElement): Promise<void> {
      button.disabled = true;
      try {
        const { hash } = await gw.call<{ hash: string }>('config.get');
        const result = await gw.act<{ message?: string }>('config.patch', {
          patch: { mcp: { servers: { [name]: { enabled } } } },
          baseHash: hash,
        });
        if (!enabled) probes.delete(name);
        app.toast(`${name} is ${enabled ? 'enabled' : 'disabled'}. ${result.message ?? ''}`.trim());
      } catch (error) {
        app.toast(`Could not change ${name}: ${errorMessage(error)}`, 'error');
      }
      await load();
    }

    async function probe(name: string, button: HTMLButtonElement): Promise<void> {
      const box = probes.get(name)!;
      button.disabled = true;
      box.setAttribute('aria-busy', 'true');
      replace(box, loadingBox(`Connecting to ${name}…`));
      try {
        // Starting a server (npx fetching a package, say) can take a while. Safe to repeat: call, not act.
        const answer = await gw.call<ProbeAnswer>('mcp.probe', { name }, 120_000);
        const server = answer.servers[name];
        const tools = answer.tools.filter((tool) => tool.startsWith(`${name}__`));
        const capabilities = [
          server?.resources ? 'resources' : '',
          server?.prompts ? 'prompts' : '',
          ...Object.entries(server?.listChanged ?? {})
            .filter(([, changes]) => changes)
            .map(([what]) => `${what} change notices`),
        ].filter(Boolean);
        const diagnostics = answer.diagnostics.filter((item) => item.serverName === name);
        replace(
          box,
          server
            ? h(
                'div',
                { class: 'notice info', role: 'status' },
                h(
                  'p',
                  null,
                  `Connected: ${server.tools} tool${server.tools === 1 ? '' : 's'}` +
                    (server.filteredTools ? ` (${server.filteredTools} more hidden by its tool filter)` : '') +
                    (capabilities.length ? `; offers ${capabilities.join(', ')}` : '') +
                    `; approval mode ${server.codexApprovalMode}.`,
                ),
                server.approvalHint ? h('p', { class: 'small' }, server.approvalHint) : null,
                tools.length
                  ? h(
                      'ul',
                      { class: 'mcp-tools', 'aria-label': `Tools of ${name}` },
                      tools.map((tool) => h('li', null, h('code', null, tool))),
                    )
                  : null,
              )
            : h('div', { class: 'notice error', role: 'alert' }, answer.issue ?? `${name} did not connect.`),
          diagnostics.length || server?.warnings?.length
            ? h(
                'ul',
                { class: 'reasons', 'aria-label': `Diagnostics for ${name}` },
                [...diagnostics.map((item) => item.message), ...(server?.warnings ?? [])].map((text) =>
                  h('li', null, text),
                ),
              )
            : null,
        );
      } catch (error) {
        replace(box, errorBox(error));
      } finally {
        button.disabled = false;
        box.removeAttribute('aria-busy');
      }
    }

    async function reloadRuntimes(): Promise<void> {
      reload.disabled = true;
      try {
        const { retired } = await gw.call<{ retired: number }>('mcp.reload', {});
        app.toast(`${retired} running MCP server${retired === 1 ? '' : 's'} stopped; each starts again on next use.`);
      } catch (error) {
        app.toast(`Could not restart MCP servers: ${errorMessage(error)}`, 'error');
      } finally {
        reload.disabled = false;
      }
      await load();
    }

    const stopWatching = onReconnect(app, () => void load());
    void load();
    return stopWatching;
  },
};
