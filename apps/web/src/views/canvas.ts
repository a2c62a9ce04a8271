/**
 * Canvas: this tab can be a canvas node, so agents can show pages without a phone or desktop
 * app. Turned on, the tab connects a second time as a node (canvas-node.ts) and shows what
 * the agent presents in a sandboxed frame. It stays a canvas while this page is open (and
 * comes back on when the page is opened again in this tab).
 *
 * A new node's commands wait for an operator's approval. When this tab's own connection may
 * approve pairings (operator.pairing), the page offers to approve its own canvas, as a
 * button the user presses: nothing is approved behind their back.
 */
import type { View } from '../app.js';
import { CanvasNode, CANVAS_COMMANDS } from '../canvas-node.js';
import { badge, errorMessage, h, pageHeader, replace } from '../dom.js';
import { gatewayUrl, type ConnectionState } from '../gateway.js';
import { loadJson, pageSecret, saveJson, type Secret } from '../storage.js';

const ON_KEY = 'claw.canvas.on';
const TOKEN_KEY = 'claw.canvas.nodeToken';

interface PendingNode {
  requestId: string;
  nodeId: string;
}

function remembered(): boolean {
  try {
    return sessionStorage.getItem(ON_KEY) === '1';
  } catch {
    return false;
  }
}

function remember(on: boolean): void {
  try {
    if (on) sessionStorage.setItem(ON_KEY, '1');
    else sessionStorage.removeItem(ON_KEY);
  } catch {
    // Storage disabled: the switch is simply not remembered.
  }
}

export const canvasView: View = {
  title: 'Canvas',
  mount(root, app) {
    const { gw, identity } = app;
    const frame = h('iframe', {
      class: 'canvas-frame',
      id: 'canvas-frame',
      title: 'Canvas',
      // Opaque origin: the page can run scripts but never reach this app or its connection.
      sandbox: 'allow-scripts',
      referrerpolicy: 'no-referrer',
      hidden: true,
    });
    const empty = h('p', { class: 'muted canvas-empty' }, 'Nothing is shown yet.');
    const toggle = h('input', { type: 'checkbox', id: 'canvas-toggle', disabled: !identity });
    const status = h('p', { class: 'canvas-status', id: 'canvas-status', role: 'status' });
    const approve = h('button', { type: 'button', id: 'canvas-approve', hidden: true }, "Approve this tab's canvas");
    // A device token is per role: the node's first admission needs the gateway secret. The page
    // keeps the one it signed in with; failing that, the user types it here (kept in memory).
    let entered: Secret | undefined;
    const tokenInput = h('input', { type: 'password', id: 'canvas-token', autocomplete: 'off' });
    const tokenLabel = h('label', { for: 'canvas-token' }, 'Gateway token');
    let wantsPassword = false;
    const tokenForm = h(
      'form',
      {
        class: 'toolbar',
        id: 'canvas-signin',
        hidden: true,
        onsubmit: (event: Event) => {
          event.preventDefault();
          const value = tokenInput.value.trim();
          if (!value) return;
          entered = { kind: wantsPassword ? 'password' : 'token', value };
          tokenInput.value = '';
          node?.gw.retryNow();
        },
      },
      tokenLabel,
      tokenInput,
      h('button', { type: 'submit' }, 'Connect the canvas'),
    );
    let node: CanvasNode | undefined;
    let pending: PendingNode | undefined;
    let unwatch: (() => void) | undefined;

    function render(): void {
      const shown = !!node && node.visible && !!node.url;
      frame.hidden = !shown;
      empty.hidden = shown;
      empty.textContent = !node
        ? 'Turn the canvas on to let agents show pages here.'
        : node.url && !node.visible
          ? 'The agent hid the canvas.'
          : 'Nothing is shown yet: agents show pages with the canvas tool.';
    }

    function setStatus(text: string, tone: 'ok' | 'warn' | 'bad' | 'muted', state: string): void {
      status.dataset.state = state;
      replace(status, badge(state === 'open' ? 'Connected' : state === 'off' ? 'Off' : 'Not ready', tone), ' ', text);
    }

    /** A pending request for this tab's node (its device or its commands), when this operator may see it. */
    async function findPending(): Promise<void> {
      let found: PendingNode | undefined;
      if (node && identity && gw.can('operator.pairing')) {
        try {
          const list = await gw.call<{ pending?: PendingNode[] }>('node.pair.list');
          found = list.pending?.find((request) => request.nodeId === identity.deviceId);
        } catch {
          found = undefined;
        }
      }
      pending = node ? found : undefined;
      approve.hidden = !pending;
      if (pending) approve.textContent = `Approve this tab's canvas (${CANVAS_COMMANDS.join(', ')})`;
      showStatus();
    }

    let lastState: ConnectionState | undefined;

    function showStatus(): void {
      const state = lastState;
      if (!node || !state) return;
      tokenForm.hidden = state.phase !== 'signed-out';
      if (state.phase === 'open' && pending) {
        setStatus(
          `This tab is connected as a node; its canvas commands wait for an operator's approval (request ${pending.requestId}).`,
          'warn',
          'pending',
        );
      } else if (state.phase === 'open') {
        const nodeId = identity?.deviceId.slice(0, 12) ?? '';
        setStatus(`This tab is a canvas node (${nodeId}…).`, 'ok', 'open');
      } else if (state.phase === 'pairing') {
        setStatus(state.message ?? 'Waiting for an operator to approve this canvas.', 'warn', 'pairing');
      } else if (state.phase === 'signed-out') {
        wantsPassword = state.wantsPassword === true;
        tokenLabel.textContent = wantsPassword ? 'Gateway password' : 'Gateway token';
        const secret = wantsPassword ? 'password' : 'token';
        setStatus(
          `${state.message ?? ''} A canvas node is admitted once with the gateway ${secret} (this tab's device key is for its operator connection); it then gets a key of its own.`.trim(),
          'warn',
          'signed-out',
        );
      } else if (state.phase === 'refused') {
        setStatus(state.message ?? 'The gateway refused this canvas.', 'bad', state.phase);
      } else {
        setStatus(state.message ?? 'Connecting…', 'muted', state.phase);
      }
    }

    function onState(state: ConnectionState): void {
      if (!node) return;
      lastState = state;
      showStatus();
      void findPending();
    }

    function turnOn(): void {
      if (node || !identity) return;
      node = new CanvasNode(
        { frame, onChange: render },
        {
          url: gatewayUrl(),
          identity,
          credentials: () => {
            const saved = loadJson<{ deviceId?: string; token?: string }>(TOKEN_KEY, {});
            return {
              secret: entered ?? pageSecret(),
              deviceToken: saved.deviceId === identity.deviceId ? saved.token : undefined,
            };
          },
          onDeviceToken: (token) => saveJson(TOKEN_KEY, { deviceId: identity.deviceId, token }),
        },
      );
      unwatch = node.watch(onState);
      node.start();
      remember(true);
      render();
    }

    function turnOff(): void {
      unwatch?.();
      node?.stop();
      node = undefined;
      lastState = undefined;
      pending = undefined;
      approve.hidden = true;
      tokenForm.hidden = true;
      frame.removeAttribute('src');
      setStatus('This tab is not a canvas.', 'muted', 'off');
      render();
    }

    toggle.addEventListener('change', () => {
      if (toggle.checked) turnOn();
      else {
        remember(false);
        turnOff();
      }
    });
    approve.addEventListener('click', async () => {
      if (!pending) return;
      approve.disabled = true;
      try {
        await gw.call('node.pair.approve', { requestId: pending.requestId });
        app.toast("This tab's canvas is approved.");
        if (node?.gw.state.phase === 'pairing') node.gw.retryNow();
      } catch (error) {
        app.toast(`Could not approve: ${errorMessage(error)}`, 'error');
      } finally {
        approve.disabled = false;
        void findPending();
      }
    });
    const stopRequested = gw.on('node.pair.requested', () => void findPending());
    const stopResolved = gw.on('node.pair.resolved', () => void findPending());

    replace(
      root,
      h(
        'div',
        { class: 'page canvas-page' },
        pageHeader('Canvas'),
        h(
          'p',
          { class: 'muted' },
          'Agents show pages on a canvas with the canvas tool. This tab can be one: it connects to the gateway as a node ' +
            '(platform "web") and shows the pages here, in a sandbox that keeps them away from this app and its sign-in.',
        ),
        identity
          ? null
          : h(
              'p',
              { class: 'notice warn' },
              'This browser cannot make a device key here (open the page over https, or on the gateway machine), and a canvas node needs one.',
            ),
        h(
          'div',
          { class: 'toolbar' },
          h('label', { class: 'cfg-check', for: 'canvas-toggle' }, toggle, ' Use this tab as a canvas'),
          approve,
        ),
        status,
        tokenForm,
        empty,
        frame,
      ),
    );
    setStatus('This tab is not a canvas.', 'muted', 'off');
    render();
    if (remembered() && identity) {
      toggle.checked = true;
      turnOn();
    }
    return () => {
      stopRequested();
      stopResolved();
      unwatch?.();
      node?.stop();
      node = undefined;
    };
  },
};
