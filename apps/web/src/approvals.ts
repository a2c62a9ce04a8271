/**
 * Exec approval prompts, on every page: each pending `exec.approval.requested` shows as a
 * card with the exact command and directory, and Allow once / Always allow here / Deny
 * (`exec.approval.resolve`). Cards leave when any client resolves the request or it expires.
 */
import type { App } from './app.js';
import { onReconnect } from './app.js';
import { h, replace } from './dom.js';

interface Pending {
  id: string;
  request: {
    command: string;
    cwd: string;
    agentId: string;
    sessionKey?: string;
    host: string;
    env?: Record<string, string>;
    warnings?: string[];
  };
  expiresAtMs: number;
}

const DECISIONS: Array<[decision: string, label: string, kind: string]> = [
  ['allow-once', 'Allow once', 'primary'],
  ['allow-always', 'Always allow here', ''],
  ['deny', 'Deny', 'danger'],
];

export function mountApprovals(container: HTMLElement, app: App): void {
  const pending = new Map<string, Pending>();
  const render = () => {
    container.hidden = pending.size === 0;
    replace(container, ...[...pending.values()].map(card));
  };
  const card = (item: Pending) => {
    const buttons = DECISIONS.map(([decision, label, kind]) =>
      h(
        'button',
        {
          type: 'button',
          class: kind,
          onclick: async () => {
            for (const button of buttons) button.disabled = true;
            try {
              await app.gw.act('exec.approval.resolve', { id: item.id, decision });
              pending.delete(item.id);
              render();
            } catch (error) {
              app.toast(`Could not answer the approval: ${(error as Error).message}`, 'error');
              for (const button of buttons) button.disabled = false;
            }
          },
        },
        label,
      ),
    );
    const env = Object.entries(item.request.env ?? {}).map(([name, value]) => `${name}=${value}`);
    const where = `${item.request.agentId}${item.request.sessionKey ? ` · ${item.request.sessionKey}` : ''} · ${item.request.host}`;
    return h(
      'section',
      { class: 'approval', role: 'alertdialog', 'aria-label': 'Exec approval', 'data-approval-id': item.id },
      h('strong', null, 'Run this command?'),
      h('pre', null, h('code', null, item.request.command)),
      h(
        'p',
        { class: 'muted' },
        `in ${item.request.cwd} · ${where} · expires ${new Date(item.expiresAtMs).toLocaleTimeString()}`,
      ),
      // The env is part of what runs; warnings (a launcher, a repository config that runs programs) come from the approver.
      ...(env.length > 0 ? [h('pre', { class: 'env' }, h('samp', null, env.join('\n')))] : []),
      ...(item.request.warnings ?? []).map((warning) => h('p', { class: 'warning', role: 'note' }, `⚠ ${warning}`)),
      h('div', { class: 'actions' }, buttons),
    );
  };
  const load = () => {
    if (!app.gw.can('operator.approvals')) return;
    app.gw.call<{ approvals: Pending[] }>('exec.approval.list').then(
      (result) => {
        pending.clear();
        for (const item of result.approvals) pending.set(item.id, item);
        render();
      },
      () => undefined,
    );
  };
  app.gw.on<Pending>('exec.approval.requested', (item) => {
    pending.set(item.id, item);
    render();
  });
  app.gw.on<{ id: string }>('exec.approval.resolved', ({ id }) => {
    if (pending.delete(id)) render();
  });
  onReconnect(app, load);
  if (app.gw.state.phase === 'open') load();
  render();
}
