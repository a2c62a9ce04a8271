/**
 * WebChat and the Control UI, in one page served by the gateway.
 *
 * Start-up: take a token from the URL fragment if there is one, load this browser's device
 * key, connect to the gateway that served the page, and show the view the fragment names
 * (`#/chat`, `#/overview`, `#/sessions`, `#/usage`, `#/agents`, `#/skills`, `#/cron`, `#/approvals`,
 * `#/channels`, `#/plugins`, `#/mcp`, `#/config`, `#/logs`, `#/canvas`).
 * The shell around the views shows the connection: a banner while it is down, a sign-in
 * form when the gateway wants a secret, a waiting screen while this device awaits approval,
 * exec approval prompts above every view (those of the conversation open in Chat show
 * inside it instead), and a notice while no model can answer. Its nav folds into a menu on
 * narrow screens (nav.ts).
 */
import type { App, View } from './app.js';
import { createApprovals, mountApprovalBar } from './approvals.js';
import { mountModelBanner } from './model-banner.js';
import { loadDeviceIdentity } from './device.js';
import { formatTime, h, replace, type Child } from './dom.js';
import { Gateway, gatewayUrl, type ConnectionState } from './gateway.js';
import { mainNav } from './nav.js';
import {
  clientId,
  forgetSecret,
  loadDeviceToken,
  loadSecret,
  saveDeviceToken,
  saveSecret,
  takeTokenFromFragment,
} from './storage.js';
import { canvasView } from './views/canvas.js';
import { channelsView } from './views/channels.js';
import { chatView } from './views/chat.js';
import { configView } from './views/config.js';
import { renderLogin } from './views/login.js';
import { logsView } from './views/logs.js';
import { mcpView } from './views/mcp.js';
import { overviewView } from './views/overview.js';
import { pluginsView } from './views/plugins.js';
import { sessionsView } from './views/sessions.js';
import { setupView } from './views/setup.js';
import { agentsView } from './views/agents.js';
import { cronView } from './views/cron.js';
import { execApprovalsView } from './views/exec-approvals.js';
import { nodesView } from './views/nodes.js';
import { skillsView } from './views/skills.js';
import { usageView } from './views/usage.js';

const ROUTES: Record<string, View> = {
  chat: chatView,
  overview: overviewView,
  sessions: sessionsView,
  usage: usageView,
  agents: agentsView,
  skills: skillsView,
  cron: cronView,
  approvals: execApprovalsView,
  channels: channelsView,
  nodes: nodesView,
  plugins: pluginsView,
  mcp: mcpView,
  config: configView,
  logs: logsView,
  canvas: canvasView,
  setup: setupView,
};
const NAV: Array<[route: string, label: string]> = [
  ['chat', 'Chat'],
  ['overview', 'Overview'],
  ['sessions', 'Sessions'],
  ['usage', 'Usage'],
  ['agents', 'Agents'],
  ['skills', 'Skills'],
  ['cron', 'Automations'],
  ['approvals', 'Approvals'],
  ['channels', 'Channels'],
  ['nodes', 'Nodes'],
  ['plugins', 'Plugins'],
  ['mcp', 'MCP'],
  ['config', 'Config'],
  ['logs', 'Logs'],
  ['canvas', 'Canvas'],
  ['setup', 'Setup'],
];
/** Everything an operator can hold; the gateway grants what the secret or pairing allows. */
const SCOPES = ['operator.admin', 'operator.read', 'operator.write', 'operator.approvals', 'operator.pairing'];

function parseRoute(): { name: string; params: URLSearchParams } {
  const hash = location.hash.replace(/^#\/?/, '');
  const [name = '', query = ''] = hash.split('?');
  return { name: ROUTES[name] ? name : 'chat', params: new URLSearchParams(query) };
}

async function main(): Promise<void> {
  const fragmentToken = takeTokenFromFragment();
  if (fragmentToken) saveSecret({ kind: 'token', value: fragmentToken });
  const identity = await loadDeviceIdentity();
  const gw = new Gateway({
    url: gatewayUrl(),
    scopes: SCOPES,
    identity,
    credentials: () => ({
      secret: loadSecret(),
      deviceToken: identity ? loadDeviceToken(identity.deviceId) : undefined,
    }),
    onDeviceToken(token) {
      if (!identity) return;
      // The device token is this browser's own, and revocable on its own (claw devices):
      // keep it rather than the gateway's shared secret.
      saveDeviceToken(identity.deviceId, token);
      saveSecret(undefined);
    },
  });

  // ── Shell ──────────────────────────────────────────────────────────────────────
  const main = h('main', { id: 'main', tabindex: '-1' });
  const topbar = h('header', { class: 'topbar' });
  const menu = mainNav(NAV, topbar);
  const pill = h('span', { class: 'pill', role: 'status' });
  const signOut = h('button', { type: 'button', class: 'link', hidden: true, onclick: () => signOutNow() }, 'Sign out');
  const banner = h('div', { class: 'banner', role: 'alert', hidden: true });
  const toasts = h('div', { class: 'toasts', 'aria-live': 'polite' });
  const approvals = h('div', { class: 'approvals', hidden: true });
  const modelBanner = h('div', { class: 'model-banner', role: 'status', hidden: true });
  const skip = h(
    'a',
    { class: 'skip', href: '#main', onclick: (event: Event) => (event.preventDefault(), main.focus()) },
    'Skip to content',
  );
  replace(
    topbar,
    h('span', { class: 'brand' }, 'claw'),
    menu.toggle,
    menu.nav,
    h('div', { class: 'status' }, pill, signOut),
  );
  replace(document.body, skip, topbar, banner, modelBanner, approvals, main, toasts);

  /** A short message in the corner; errors stay until dismissed. */
  function toast(message: string, kind: 'info' | 'error' = 'info'): void {
    const close = h('button', { type: 'button', class: 'icon', 'aria-label': 'Dismiss' }, '×');
    const item = h(
      'div',
      { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status' },
      h('span', null, message),
      close,
    );
    close.addEventListener('click', () => item.remove());
    toasts.append(item);
    if (kind === 'info') window.setTimeout(() => item.remove(), 5000);
  }
  const app: App = {
    gw,
    clientId: clientId(),
    identity,
    go: (route) => void (location.hash = route),
    toast,
    approvals: createApprovals(gw, toast),
  };

  mountApprovalBar(approvals, app.approvals);
  mountModelBanner(modelBanner, app);

  // ── Views ──────────────────────────────────────────────────────────────────────
  let unmount: (() => void) | undefined;
  let shown: 'view' | 'screen' | undefined;

  function showRoute(focus: boolean): void {
    const { name, params } = parseRoute();
    menu.setCurrent(name);
    unmount?.();
    main.className = `view-${name}`;
    const view = ROUTES[name]!;
    document.title = `${view.title} · claw`;
    unmount = view.mount(main, app, params);
    shown = 'view';
    if (focus) main.querySelector<HTMLElement>('h1')?.focus();
  }

  /** A full-page state instead of a view (connecting, waiting for approval, refused). */
  function showScreen(...content: Child[]): void {
    unmount?.();
    unmount = undefined;
    shown = 'screen';
    main.className = 'view-screen';
    replace(main, h('div', { class: 'screen' }, ...content));
  }

  window.addEventListener('hashchange', () => {
    if (shown === 'view') showRoute(true);
  });

  function signIn(secret: { kind: 'token' | 'password'; value: string }): void {
    saveSecret(secret);
    showScreen(h('p', { class: 'muted' }, 'Connecting…'));
    gw.retryNow();
  }

  function signOutNow(): void {
    forgetSecret();
    if (identity) saveDeviceToken(identity.deviceId, undefined);
    gw.stop();
  }

  // ── Connection ─────────────────────────────────────────────────────────────────
  let countdown: number | undefined;
  gw.watch((state: ConnectionState) => {
    const labels: Record<ConnectionState['phase'], string> = {
      connecting: 'Connecting…',
      open: 'Connected',
      reconnecting: 'Offline',
      pairing: 'Awaiting approval',
      'signed-out': 'Signed out',
      refused: 'Refused',
    };
    pill.textContent = labels[state.phase];
    pill.dataset.phase = state.phase;
    signOut.hidden =
      state.phase !== 'open' || (state.hello?.snapshot as { authMode?: string } | undefined)?.authMode === 'none';
    clearInterval(countdown);
    banner.hidden = state.phase !== 'reconnecting';
    if (state.phase === 'reconnecting') {
      const retry = h('button', { type: 'button', onclick: () => gw.retryNow() }, 'Retry now');
      const text = h('span');
      const tick = () =>
        (text.textContent = `${state.message ?? 'Disconnected'}. Reconnecting in ${Math.max(0, Math.ceil(((state.retryAt ?? 0) - Date.now()) / 1000))} s…`);
      tick();
      countdown = window.setInterval(tick, 1000);
      replace(banner, text, retry);
      if (shown !== 'view') showScreen(h('p', { class: 'muted' }, 'Cannot reach the gateway yet. Retrying…'));
    }
    if (state.phase === 'open' && shown !== 'view') showRoute(false);
    if (state.phase === 'connecting' && !shown) showScreen(h('p', { class: 'muted' }, 'Connecting to the gateway…'));
    if (state.phase === 'signed-out') {
      // A device token that worked would have been accepted: this one is stale.
      if (identity) saveDeviceToken(identity.deviceId, undefined);
      unmount?.();
      unmount = undefined;
      shown = 'screen';
      main.className = 'view-login';
      renderLogin(main, state, signIn);
    }
    if (state.phase === 'pairing') {
      showScreen(
        h('h1', { tabindex: '-1' }, 'Waiting for approval'),
        h('p', null, 'The gateway does not know this browser yet. Approve it on the gateway machine:'),
        h('pre', null, h('code', null, `claw devices approve ${state.requestId ?? ''}`)),
        h(
          'p',
          { class: 'muted' },
          `This page connects by itself once approved (next try ${formatTime(state.retryAt)}).`,
        ),
      );
    }
    if (state.phase === 'refused') {
      showScreen(
        h('h1', { tabindex: '-1' }, 'The gateway refused the connection'),
        h('p', { class: 'notice error', role: 'alert' }, state.message ?? 'No reason given.'),
        h('button', { type: 'button', class: 'primary', onclick: () => gw.retryNow() }, 'Try again'),
      );
    }
    // Views need a connection: on the sign-in and waiting screens there is nowhere to go.
    menu.setAvailable(shown === 'view');
  });
  gw.start();
}

void main();
