/**
 * Exec approval prompts. Each pending `exec.approval.requested` shows as a card with the
 * exact command and directory, and Allow once / Always allow here / Deny
 * (`exec.approval.resolve`); cards leave when any client resolves the request or it expires.
 *
 * One list of pending requests serves two places: the bar above every view, and a view that
 * shows some of them itself — Chat shows its conversation's requests inline, where the run
 * that asks is — and claims them, so the bar leaves those out.
 */
import { onReconnect, type App } from './app.js';
import type { Gateway } from './gateway.js';
import { h, replace } from './dom.js';

export interface PendingApproval {
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

/** How a request ended: the decision, and why when nobody made it ("timeout", "no-approver"). */
export interface ApprovalOutcome {
  id: string;
  decision: string;
  reason?: string;
}

export interface Approvals {
  /** Pending requests, oldest first. */
  list(): PendingApproval[];
  /** Called after every change; with the outcome when a request was resolved. */
  watch(listener: (resolved?: ApprovalOutcome) => void): () => void;
  /** Show the requests `owns` picks elsewhere than the bar; `changed()` when what it picks changes. */
  claim(owns: (item: PendingApproval) => boolean): { changed(): void; release(): void };
  claimed(item: PendingApproval): boolean;
  /** The card for one request, with its three buttons. */
  card(item: PendingApproval): HTMLElement;
}

const DECISIONS: Array<[decision: string, label: string, kind: string]> = [
  ['allow-once', 'Allow once', 'primary'],
  ['allow-always', 'Always allow here', ''],
  ['deny', 'Deny', 'danger'],
];

const OUTCOMES: Record<string, string> = {
  'allow-once': 'Allowed once',
  'allow-always': 'Always allowed here',
  deny: 'Denied',
};

/** What a resolved request says where its card was. */
export function outcomeText(outcome: ApprovalOutcome): string {
  if (outcome.reason === 'timeout') return 'Nobody answered in time, so it was denied';
  if (outcome.reason === 'no-approver') return 'No one could answer, so it was denied';
  return OUTCOMES[outcome.decision] ?? outcome.decision;
}

export function createApprovals(gw: Gateway, toast: App['toast']): Approvals {
  const pending = new Map<string, PendingApproval>();
  const listeners = new Set<(resolved?: ApprovalOutcome) => void>();
  const claims = new Set<(item: PendingApproval) => boolean>();
  const notify = (resolved?: ApprovalOutcome) => {
    for (const listener of [...listeners]) listener(resolved);
  };

  const card = (item: PendingApproval) => {
    const buttons = DECISIONS.map(([decision, label, kind]) =>
      h(
        'button',
        {
          type: 'button',
          class: kind,
          onclick: async () => {
            for (const button of buttons) button.disabled = true;
            try {
              await gw.act('exec.approval.resolve', { id: item.id, decision });
              if (pending.delete(item.id)) notify({ id: item.id, decision });
            } catch (error) {
              toast(`Could not answer the approval: ${(error as Error).message}`, 'error');
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
    if (!gw.can('operator.approvals')) return;
    gw.call<PendingApproval[]>('exec.approval.list').then(
      (approvals) => {
        pending.clear();
        for (const item of approvals) pending.set(item.id, item);
        notify();
      },
      () => undefined,
    );
  };
  gw.on<PendingApproval>('exec.approval.requested', (item) => {
    pending.set(item.id, item);
    notify();
  });
  gw.on<ApprovalOutcome>('exec.approval.resolved', (outcome) => {
    if (pending.delete(outcome.id)) notify(outcome);
  });
  onReconnect({ gw }, load);
  if (gw.state.phase === 'open') load();

  return {
    list: () => [...pending.values()],
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    claim(owns) {
      claims.add(owns);
      notify();
      return {
        changed: () => notify(),
        release: () => (claims.delete(owns), notify()),
      };
    },
    claimed: (item) => [...claims].some((owns) => owns(item)),
    card,
  };
}

/** The bar above every view: the requests no view shows itself. */
export function mountApprovalBar(container: HTMLElement, approvals: Approvals): void {
  const render = () => {
    const shown = approvals.list().filter((item) => !approvals.claimed(item));
    container.hidden = shown.length === 0;
    replace(container, ...shown.map((item) => approvals.card(item)));
  };
  approvals.watch(render);
  render();
}
