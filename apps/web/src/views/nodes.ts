/**
 * Nodes: other machines and browser tabs connected to the gateway with role "node". Pairing
 * requests wait at the top — a new device asking to pair, or a paired node asking to be sent more
 * commands — with Approve and Reject (`node.pair.approve` / `node.pair.reject`); below, every
 * known node with its status, last contact and effective commands, to rename (`node.rename`) or
 * remove (`node.pair.remove`). An admin can make a setup code (`device.pair.setupCode`) that pairs
 * a node without a second approval. node.pair.* events, presence and setup completions keep it live.
 */
import { onReconnect, type View } from '../app.js';
import { badge, dataTable, errorBox, errorMessage, formatAgo, h, loadingBox, pageHeader, replace } from '../dom.js';

interface PendingRequest {
  requestId: string;
  nodeId: string;
  displayName: string | null;
  platform: string | null;
  remoteIp: string | null;
  commands: string[];
  requiredApproveScopes?: string[];
  ts: number;
}

interface NodeEntry {
  nodeId: string;
  displayName: string | null;
  platform: string | null;
  remoteIp: string | null;
  caps: string[];
  commands: string[];
  paired: boolean;
  connected: boolean;
  approvalState: string | null;
  lastSeenAtMs: number | null;
  lastConnectedAtMs: number | null;
  connectedAtMs: number | null;
}

interface SetupCode {
  setupCode: string;
  qrDataUrl?: string;
  gatewayUrl: string;
  expiresAtMs: number;
}

const name = (node: { displayName: string | null; nodeId: string }) => node.displayName ?? node.nodeId.slice(0, 12);
const list = (values: string[] | undefined) => (values && values.length ? values.join(', ') : '—');

/** Events after which the lists may have changed. */
const LIVE_EVENTS = [
  'node.pair.requested',
  'node.pair.resolved',
  'device.pair.changed',
  'device.pair.setup.completed',
  'presence',
];

export const nodesView: View = {
  title: 'Nodes',
  mount(root, app) {
    const { gw } = app;
    const pairing = gw.can('operator.pairing');
    const admin = gw.can('operator.admin');
    const pendingBox = h('div', { 'aria-busy': 'true' }, loadingBox());
    const nodesBox = h('div', { 'aria-busy': 'true' }, loadingBox());
    const setupBox = h('div');
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('Nodes', h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
        h(
          'p',
          { class: 'muted' },
          'Machines and browser tabs the agent can send commands to (claw node run on another machine). A node is sent only the commands you approved.',
        ),
        admin ? setupForm() : null,
        setupBox,
        h('h2', { class: 'section-title' }, 'Waiting for approval'),
        pendingBox,
        h('h2', { class: 'section-title' }, 'Nodes'),
        nodesBox,
      ),
    );

    const act = async (work: () => Promise<unknown>, done: string) => {
      try {
        await work();
        app.toast(done);
        await load();
      } catch (error) {
        app.toast(errorMessage(error), 'error');
      }
    };

    function setupForm(): HTMLElement {
      const wsUrl = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}`;
      const url = h('input', { type: 'text', id: 'setup-url', value: wsUrl, autocomplete: 'off', spellcheck: 'false' });
      return h(
        'form',
        {
          class: 'card setup-code-form',
          onsubmit: (event: Event) => {
            event.preventDefault();
            void makeSetupCode(url.value.trim());
          },
        },
        h('label', { for: 'setup-url' }, 'Gateway URL the node will use'),
        url,
        h('button', { type: 'submit' }, 'Make a setup code'),
      );
    }

    async function makeSetupCode(publicUrl: string): Promise<void> {
      try {
        const code = await gw.call<SetupCode>('device.pair.setupCode', publicUrl ? { publicUrl } : {});
        replace(
          setupBox,
          h(
            'section',
            { class: 'card setup-code', 'aria-label': 'Setup code' },
            code.qrDataUrl ? h('img', { src: code.qrDataUrl, alt: 'Setup code as a QR code', width: '200' }) : null,
            h('p', null, 'On the node run: ', h('code', null, 'claw node run --pair <code>')),
            h('p', null, h('code', { class: 'setup-code-text' }, code.setupCode)),
            h(
              'p',
              { class: 'muted small' },
              `For ${code.gatewayUrl}. Works once, until ${new Date(code.expiresAtMs).toLocaleTimeString()}.`,
            ),
          ),
        );
      } catch (error) {
        app.toast(errorMessage(error), 'error');
      }
    }

    function renderPending(pending: PendingRequest[]): void {
      pendingBox.removeAttribute('aria-busy');
      if (!pending.length) return replace(pendingBox, h('p', { class: 'empty' }, 'No pairing requests.'));
      replace(
        pendingBox,
        dataTable({
          caption: 'Pairing requests',
          rows: pending,
          rowProps: (request) => ({ 'data-request': request.requestId }),
          columns: [
            { label: 'Node', cell: (request) => h('strong', null, name(request)) },
            { label: 'Platform', cell: (request) => request.platform ?? '—' },
            { label: 'Address', cell: (request) => request.remoteIp ?? '—' },
            {
              label: 'Asks for',
              cell: (request) => (request.commands.length ? list(request.commands) : 'pairing (no commands)'),
            },
            { label: 'Asked', cell: (request) => formatAgo(request.ts) },
            {
              label: 'Actions',
              hiddenLabel: true,
              cell: (request) =>
                pairing
                  ? h(
                      'div',
                      { class: 'row-actions' },
                      h(
                        'button',
                        {
                          type: 'button',
                          'aria-label': `Approve ${name(request)}`,
                          onclick: () =>
                            void act(
                              () => gw.act('node.pair.approve', { requestId: request.requestId }),
                              `Approved ${name(request)}.`,
                            ),
                        },
                        'Approve',
                      ),
                      h(
                        'button',
                        {
                          type: 'button',
                          class: 'danger',
                          'aria-label': `Reject ${name(request)}`,
                          onclick: () =>
                            void act(
                              () => gw.act('node.pair.reject', { requestId: request.requestId }),
                              `Rejected ${name(request)}.`,
                            ),
                        },
                        'Reject',
                      ),
                    )
                  : h('span', { class: 'muted small' }, 'needs operator.pairing'),
            },
          ],
        }),
      );
    }

    function renderNodes(nodes: NodeEntry[]): void {
      nodesBox.removeAttribute('aria-busy');
      const known = nodes.filter((node) => node.paired || node.connected);
      if (!known.length)
        return replace(nodesBox, h('p', { class: 'empty' }, 'No nodes yet: pair one with a setup code or claw qr.'));
      replace(
        nodesBox,
        dataTable({
          caption: 'Nodes',
          rows: known,
          rowProps: (node) => ({ 'data-node': node.nodeId }),
          columns: [
            {
              label: 'Node',
              cell: (node) => [
                h('strong', null, name(node)),
                h('div', { class: 'muted small' }, node.nodeId.slice(0, 12)),
              ],
            },
            { label: 'Platform', cell: (node) => node.platform ?? '—' },
            {
              label: 'Status',
              cell: (node) => [
                node.connected ? badge('Connected', 'ok') : badge('Offline', 'muted'),
                node.approvalState && node.approvalState !== 'approved' ? badge(node.approvalState, 'warn') : null,
              ],
            },
            {
              label: 'Last seen',
              cell: (node) =>
                node.connected ? 'now' : formatAgo(node.lastSeenAtMs ?? node.lastConnectedAtMs ?? undefined),
            },
            { label: 'Commands', cell: (node) => h('span', { class: 'node-commands' }, list(node.commands)) },
            {
              label: 'Actions',
              hiddenLabel: true,
              cell: (node) =>
                pairing && node.paired
                  ? h(
                      'div',
                      { class: 'row-actions' },
                      h(
                        'button',
                        {
                          type: 'button',
                          'aria-label': `Rename ${name(node)}`,
                          onclick: () => {
                            const next = window.prompt(`New name for ${name(node)}`, node.displayName ?? '')?.trim();
                            if (next)
                              void act(
                                () => gw.act('node.rename', { nodeId: node.nodeId, displayName: next }),
                                `Renamed to ${next}.`,
                              );
                          },
                        },
                        'Rename',
                      ),
                      h(
                        'button',
                        {
                          type: 'button',
                          class: 'danger',
                          'aria-label': `Remove ${name(node)}`,
                          onclick: () => {
                            if (window.confirm(`Remove ${name(node)}? It is disconnected and must pair again.`))
                              void act(
                                () => gw.act('node.pair.remove', { nodeId: node.nodeId }),
                                `Removed ${name(node)}.`,
                              );
                          },
                        },
                        'Remove',
                      ),
                    )
                  : null,
            },
          ],
        }),
      );
    }

    async function load(): Promise<void> {
      try {
        const [listed, pairs] = await Promise.all([
          gw.call<{ nodes: NodeEntry[] }>('node.list', {}),
          pairing ? gw.call<{ pending: PendingRequest[] }>('node.pair.list', {}) : Promise.resolve({ pending: [] }),
        ]);
        renderPending(pairs.pending);
        renderNodes(listed.nodes);
      } catch (error) {
        pendingBox.removeAttribute('aria-busy');
        nodesBox.removeAttribute('aria-busy');
        replace(
          nodesBox,
          errorBox(error, () => void load()),
        );
        replace(pendingBox);
      }
    }

    // Requests, decisions and connects from anywhere: refresh once a burst settles.
    let pendingRefresh: number | undefined;
    const refresh = () => {
      clearTimeout(pendingRefresh);
      pendingRefresh = window.setTimeout(() => void load(), 150);
    };
    const stops = LIVE_EVENTS.map((event) => gw.on(event, refresh));
    const stopWatching = onReconnect(app, () => void load());
    void load();
    return () => {
      clearTimeout(pendingRefresh);
      for (const stop of stops) stop();
      stopWatching();
    };
  },
};
