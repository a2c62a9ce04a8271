/** Channels: which messaging channels run, each account's state, and people waiting to be approved. */
import { every, onReconnect, type View } from '../app.js';
import { badge, dataTable, errorMessage, formatAgo, h, loader, pageHeader, replace } from '../dom.js';

interface ChannelInfo {
  id: string;
  pluginId: string;
  configured: boolean;
  enabled: boolean;
  accounts: Array<{
    accountId: string;
    running: boolean;
    connected: boolean;
    state?: string;
    detail?: string;
    lastError?: string;
    lastInboundAt?: number;
    lastOutboundAt?: number;
  }>;
}

interface LoginState {
  connected: boolean;
  qr?: string;
  qrDataUrl?: string;
  message: string;
}

/** Account states of a QR-linked channel (WhatsApp) that a new QR login fixes. */
const NEEDS_QR = new Set(['not-linked', 'logged-out', 'qr', 'conflict']);

interface PairingRequest {
  code: string;
  channel: string;
  senderId: string;
  senderName?: string;
  createdAt: number;
  expiresAt: number;
}

export const channelsView: View = {
  title: 'Channels',
  mount(root, app) {
    const { gw } = app;
    const channelsBox = h('div', { class: 'cards' });
    const pairingBox = h('div', { class: 'table-wrap' });
    // Outside the cards, which every refresh redraws: a QR login survives them.
    const loginBox = h('div', { class: 'qr-login' });
    const loadChannels = loader(
      channelsBox,
      () => gw.call<{ channels: ChannelInfo[] }>('channels.status'),
      ({ channels }) =>
        replace(
          channelsBox,
          channels.length ? channels.map(channelCard) : h('p', { class: 'empty' }, 'No channel plugin is enabled.'),
        ),
      'Loading channels…',
    );
    const loadPairing = loader(
      pairingBox,
      () => gw.call<{ requests: PairingRequest[] }>('pairing.list', {}),
      ({ requests }) =>
        replace(
          pairingBox,
          requests.length
            ? pairingTable(requests)
            : h(
                'p',
                { class: 'empty' },
                'Nobody is waiting. People who message the assistant on a channel with dmPolicy "pairing" appear here with their code.',
              ),
        ),
      'Loading requests…',
    );
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('Channels', h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
        channelsBox,
        loginBox,
        h('h2', { class: 'section-title' }, 'Waiting for approval'),
        pairingBox,
      ),
    );

    async function load(): Promise<void> {
      if (!gw.can('operator.pairing'))
        replace(pairingBox, h('p', { class: 'muted' }, 'Approving people needs the operator.pairing scope.'));
      await Promise.all([loadChannels(), gw.can('operator.pairing') ? loadPairing() : undefined]);
    }

    function channelCard(channel: ChannelInfo): HTMLElement {
      const running = channel.accounts.some((account) => account.running);
      const state = running
        ? badge('Running', 'ok')
        : channel.accounts.some((account) => account.lastError)
          ? badge('Failed', 'bad')
          : badge(channel.configured ? (channel.enabled ? 'Stopped' : 'Disabled') : 'Not configured', 'muted');
      return h(
        'section',
        { class: 'card', 'data-channel': channel.id },
        h('h2', null, channel.id, ' ', state),
        h(
          'p',
          { class: 'muted' },
          `Plugin ${channel.pluginId}${channel.configured ? '' : running ? ' · runs with its defaults' : ` · not configured (channels.${channel.id})`}`,
        ),
        channel.accounts.length
          ? h(
              'ul',
              { class: 'plain-list' },
              channel.accounts.map((account) =>
                h(
                  'li',
                  null,
                  h('strong', null, account.accountId),
                  ': ',
                  account.running ? (account.connected ? 'connected' : 'running, not connected') : 'not running',
                  account.detail ? ` · ${account.detail}` : '',
                  account.lastInboundAt ? ` · last message ${formatAgo(account.lastInboundAt)}` : '',
                  account.lastOutboundAt ? ` · last reply ${formatAgo(account.lastOutboundAt)}` : '',
                  account.lastError ? h('p', { class: 'error-text' }, account.lastError) : null,
                  account.state && NEEDS_QR.has(account.state) && gw.can('operator.admin')
                    ? h(
                        'button',
                        { type: 'button', class: 'primary', onclick: () => void link(channel.id, account.accountId) },
                        'Link with QR code',
                      )
                    : null,
                ),
              ),
            )
          : null,
      );
    }

    function pairingTable(requests: PairingRequest[]): HTMLElement {
      return dataTable({
        caption: 'People waiting for approval',
        rows: requests,
        columns: [
          { label: 'Channel', cell: (request) => request.channel },
          {
            label: 'Who',
            cell: (request) => (request.senderName ? `${request.senderName} (${request.senderId})` : request.senderId),
          },
          { label: 'Code', cell: (request) => h('code', null, request.code) },
          { label: 'Expires', cell: (request) => new Date(request.expiresAt).toLocaleTimeString() },
          {
            label: 'Actions',
            hiddenLabel: true,
            cell: (request) =>
              h('button', { type: 'button', class: 'primary', onclick: () => void approve(request) }, 'Approve'),
          },
        ],
      });
    }

    /** web.login.start, then web.login.wait until linked, showing each new QR as it comes. */
    async function link(channel: string, accountId: string): Promise<void> {
      const box = h(
        'section',
        { class: 'card', 'data-qr-login': `${channel}:${accountId}` },
        h('p', null, 'Asking for a QR code…'),
      );
      replace(loginBox, box);
      try {
        let state = await gw.act<LoginState>('web.login.start', { channel, accountId });
        while (!state.connected) {
          replace(
            box,
            h('h2', null, `Link ${channel} (${accountId})`),
            h('p', null, state.message),
            state.qrDataUrl
              ? h('img', { src: state.qrDataUrl, alt: 'QR code to scan with the phone', width: '264', height: '264' })
              : null,
          );
          state = await gw.call<LoginState>(
            'web.login.wait',
            { channel, accountId, timeoutMs: 20_000, ...(state.qr ? { currentQr: state.qr } : {}) },
            35_000,
          );
        }
        app.toast(state.message);
        box.remove();
        await load();
      } catch (error) {
        replace(box, h('p', { class: 'error-text' }, errorMessage(error)));
      }
    }

    async function approve(request: PairingRequest): Promise<void> {
      try {
        await gw.act('pairing.approve', { channel: request.channel, code: request.code });
        app.toast(`${request.senderName ?? request.senderId} may now message the assistant on ${request.channel}.`);
        await load();
      } catch (error) {
        app.toast(errorMessage(error), 'error');
      }
    }

    const cleanups = [onReconnect(app, () => void load()), every(15_000, () => void load())];
    void load();
    return () => cleanups.forEach((cleanup) => cleanup());
  },
};
