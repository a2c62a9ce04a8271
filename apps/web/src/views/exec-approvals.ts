/**
 * Approvals: the host commands waiting for a decision (`exec.approval.list`, kept live by the
 * `exec.approval.requested` / `resolved` events, answered with `exec.approval.resolve`), and
 * the gateway's approvals document (`exec.approvals.get` / `set`): its defaults and the
 * allowlist of each agent, where entries are added and removed. Every change of the document
 * carries the hash it was read at, so an edit made elsewhere meanwhile is not overwritten.
 */
import { onReconnect, type View } from '../app.js';
import {
  badge,
  errorBox,
  errorMessage,
  formatAgo,
  formatTime,
  h,
  loadingBox,
  pageHeader,
  randomId,
  replace,
} from '../dom.js';

interface Pending {
  id: string;
  request: { command: string; cwd: string; agentId: string; sessionKey?: string; host: string; warnings?: string[] };
  expiresAtMs: number;
}

type Security = 'deny' | 'allowlist' | 'full';
type Ask = 'off' | 'on-miss' | 'always';

interface Entry {
  id?: string;
  pattern: string;
  argPattern?: string;
  cwd?: string;
  lastUsedAt?: number;
  lastUsedCommand?: string;
}

interface Level {
  security?: Security;
  ask?: Ask;
  askFallback?: Security;
  allowlist?: Entry[];
}

interface Document {
  version: 1;
  defaults?: Omit<Level, 'allowlist'>;
  agents?: Record<string, Level>;
}

interface PolicyAnswer {
  path: string;
  exists: boolean;
  hash: string;
  file: Document;
  effective: Record<string, { security: Security; ask: Ask; askFallback: Security; allowlist: string[] }>;
}

const DECISIONS: Array<[decision: string, label: string, kind: string]> = [
  ['allow-once', 'Allow once', 'primary'],
  ['allow-always', 'Always allow here', ''],
  ['deny', 'Deny', 'danger'],
];
const LEVEL_FIELDS: Array<[field: 'security' | 'ask' | 'askFallback', label: string, values: string[], help: string]> =
  [
    [
      'security',
      'Security',
      ['deny', 'allowlist', 'full'],
      'deny: no host commands; allowlist: only listed ones; full: any',
    ],
    ['ask', 'Ask', ['off', 'on-miss', 'always'], 'when to ask a person before a command runs'],
    ['askFallback', 'When nobody answers', ['deny', 'allowlist', 'full'], 'what applies if no one decides in time'],
  ];
const agentName = (agent: string) => (agent === '*' ? 'Every agent (*)' : agent);

export const execApprovalsView: View = {
  title: 'Approvals',
  mount(root, app) {
    const { gw } = app;
    const pending = new Map<string, Pending>();
    let policy: PolicyAnswer | undefined;
    const pendingBox = h('div', { class: 'stack', 'aria-busy': 'true' }, loadingBox());
    const policyBox = h('div', { class: 'stack', 'aria-busy': 'true' }, loadingBox());
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('Approvals', h('button', { type: 'button', onclick: () => load() }, 'Refresh')),
        h(
          'p',
          { class: 'muted' },
          'Commands an agent wants to run on this machine wait here when the policy says to ask. The allowlist below lets the listed programs run without asking.',
        ),
        h(
          'section',
          { 'aria-labelledby': 'approvals-pending' },
          h('h2', { id: 'approvals-pending' }, 'Waiting for you'),
          pendingBox,
        ),
        h(
          'section',
          { 'aria-labelledby': 'approvals-policy' },
          h('h2', { id: 'approvals-policy', class: 'section-title' }, 'Policy'),
          policyBox,
        ),
      ),
    );

    // ── Pending ──
    function renderPending(): void {
      pendingBox.removeAttribute('aria-busy');
      if (!gw.can('operator.approvals'))
        return replace(
          pendingBox,
          h('p', { class: 'muted' }, 'Answering approvals needs the operator.approvals scope.'),
        );
      if (!pending.size) return replace(pendingBox, h('p', { class: 'empty' }, 'Nothing is waiting for a decision.'));
      replace(pendingBox, [...pending.values()].map(card));
    }

    function card(item: Pending): HTMLElement {
      const buttons = DECISIONS.map(([decision, label, kind]) =>
        h('button', { type: 'button', class: kind, onclick: () => void decide(item, decision, buttons) }, label),
      );
      return h(
        'article',
        { class: 'card approval-card', 'data-approval': item.id, 'aria-label': `Approval for ${item.request.command}` },
        h('pre', { class: 'command' }, h('code', null, item.request.command)),
        h(
          'dl',
          null,
          h('dt', null, 'Directory'),
          h('dd', null, item.request.cwd),
          h('dt', null, 'Agent'),
          h('dd', null, item.request.agentId, item.request.sessionKey ? ` · ${item.request.sessionKey}` : ''),
          h('dt', null, 'Expires'),
          h('dd', null, formatTime(item.expiresAtMs)),
        ),
        (item.request.warnings ?? []).map((warning) => h('p', { class: 'warn-text', role: 'note' }, `⚠ ${warning}`)),
        h('div', { class: 'row-actions' }, buttons),
      );
    }

    async function decide(item: Pending, decision: string, buttons: HTMLButtonElement[]): Promise<void> {
      for (const button of buttons) button.disabled = true;
      try {
        await gw.act('exec.approval.resolve', { id: item.id, decision });
        pending.delete(item.id);
        renderPending();
        app.toast(`${decision === 'deny' ? 'Denied' : 'Allowed'}: ${item.request.command}`);
        // An "always" answer adds to the allowlist.
        if (decision === 'allow-always') void loadPolicy();
      } catch (error) {
        app.toast(`Could not answer the approval: ${errorMessage(error)}`, 'error');
        for (const button of buttons) button.disabled = false;
      }
    }

    async function loadPending(): Promise<void> {
      if (!gw.can('operator.approvals')) return renderPending();
      try {
        const approvals = await gw.call<Pending[]>('exec.approval.list');
        pending.clear();
        for (const item of approvals) pending.set(item.id, item);
        renderPending();
      } catch (error) {
        pendingBox.removeAttribute('aria-busy');
        replace(
          pendingBox,
          errorBox(error, () => void loadPending()),
        );
      }
    }

    // ── Policy ──
    async function loadPolicy(): Promise<void> {
      policyBox.removeAttribute('aria-busy');
      if (!gw.can('operator.admin'))
        return replace(policyBox, h('p', { class: 'muted' }, 'The policy needs the operator.admin scope.'));
      try {
        policy = await gw.call<PolicyAnswer>('exec.approvals.get');
        renderPolicy();
      } catch (error) {
        replace(
          policyBox,
          errorBox(error, () => void loadPolicy()),
        );
      }
    }

    /** Write the edited document; refused (and re-read) when it changed since it was read. */
    async function saveDocument(file: Document, done: string): Promise<void> {
      if (!policy) return;
      try {
        policy = await gw.act<PolicyAnswer>('exec.approvals.set', { file, baseHash: policy.hash });
        app.toast(done);
        renderPolicy();
      } catch (error) {
        app.toast(`Not saved: ${errorMessage(error)}`, 'error');
        await loadPolicy();
      }
    }

    function renderPolicy(): void {
      if (!policy) return;
      const doc = policy.file;
      const agents = [...new Set(['*', ...Object.keys(policy.effective), ...Object.keys(doc.agents ?? {})])];
      replace(
        policyBox,
        h('p', { class: 'muted small' }, policy.exists ? policy.path : `${policy.path} (not written yet)`),
        effectiveCards(),
        defaultsForm(doc),
        h('h3', null, 'Allowlist'),
        agents.map((agent) => allowlist(doc, agent)),
        addForm(doc, agents),
      );
    }

    function effectiveCards(): HTMLElement {
      return h(
        'div',
        { class: 'cards compact-cards' },
        Object.entries(policy!.effective).map(([agent, effective]) =>
          h(
            'article',
            { class: 'card', 'data-agent': agent },
            h('h3', null, agent),
            h(
              'dl',
              null,
              h('dt', null, 'Security'),
              h('dd', null, badge(effective.security, effective.security === 'full' ? 'warn' : 'ok')),
              h('dt', null, 'Ask'),
              h('dd', null, effective.ask),
              h('dt', null, 'When nobody answers'),
              h('dd', null, effective.askFallback),
              h('dt', null, 'Allowed programs'),
              h('dd', null, String(effective.allowlist.length)),
            ),
          ),
        ),
      );
    }

    function defaultsForm(doc: Document): HTMLElement {
      const selects = LEVEL_FIELDS.map(([field, label, values, help]) => {
        const id = `approvals-default-${field}`;
        const select = h(
          'select',
          { id, 'aria-describedby': `${id}-help` },
          h('option', { value: '' }, 'Not set'),
          values.map((value) => h('option', { value, selected: doc.defaults?.[field] === value }, value)),
        );
        return {
          field,
          select,
          row: h(
            'div',
            { class: 'field' },
            h('label', { for: id }, label),
            select,
            h('p', { class: 'muted small', id: `${id}-help` }, help),
          ),
        };
      });
      const submit = (event: Event) => {
        event.preventDefault();
        const defaults: Record<string, string> = {};
        for (const { field, select } of selects) if (select.value) defaults[field] = select.value;
        const next: Document = structuredClone(doc);
        if (Object.keys(defaults).length) next.defaults = defaults;
        else delete next.defaults;
        void saveDocument(next, 'Saved the approval defaults.');
      };
      return h(
        'form',
        { class: 'card field-grid', onsubmit: submit, 'aria-labelledby': 'approvals-defaults' },
        h('h3', { id: 'approvals-defaults' }, 'Defaults'),
        h('p', { class: 'muted small' }, 'These can only make the config (tools.exec) stricter, never looser.'),
        selects.map((item) => item.row),
        h('div', { class: 'form-actions' }, h('button', { type: 'submit' }, 'Save defaults')),
      );
    }

    function allowlist(doc: Document, agent: string): HTMLElement | null {
      const entries = doc.agents?.[agent]?.allowlist ?? [];
      if (!entries.length) return null;
      return h(
        'section',
        { class: 'allowlist', 'aria-label': `Allowlist of ${agentName(agent)}` },
        h('h4', null, agentName(agent)),
        h(
          'ul',
          { class: 'plain-list' },
          entries.map((entry) =>
            h(
              'li',
              { class: 'allow-entry' },
              h(
                'div',
                null,
                h('code', null, entry.pattern),
                entry.argPattern ? h('span', { class: 'muted small' }, ` args ${entry.argPattern}`) : null,
                entry.cwd ? h('div', { class: 'muted small' }, `in ${entry.cwd}`) : null,
                entry.lastUsedAt
                  ? h(
                      'div',
                      { class: 'muted small' },
                      `last used ${formatAgo(entry.lastUsedAt)}: ${entry.lastUsedCommand ?? ''}`,
                    )
                  : null,
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'danger',
                  'aria-label': `Remove ${entry.pattern} from ${agentName(agent)}`,
                  onclick: () => {
                    const next: Document = structuredClone(doc);
                    const level = next.agents![agent]!;
                    level.allowlist = level.allowlist!.filter((other) => !sameEntry(other, entry));
                    void saveDocument(next, `Removed ${entry.pattern} from ${agentName(agent)}.`);
                  },
                },
                'Remove',
              ),
            ),
          ),
        ),
      );
    }

    function addForm(doc: Document, agents: string[]): HTMLElement {
      const pattern = h('input', {
        type: 'text',
        id: 'allow-pattern',
        required: true,
        spellcheck: 'false',
        autocomplete: 'off',
        placeholder: '/usr/bin/git or rg',
        'aria-describedby': 'allow-pattern-help',
      });
      const agent = h(
        'select',
        { id: 'allow-agent' },
        agents.map((id) => h('option', { value: id }, agentName(id))),
      );
      const submit = (event: Event) => {
        event.preventDefault();
        const value = pattern.value.trim();
        if (!value) return pattern.focus();
        const next: Document = structuredClone(doc);
        const level = ((next.agents ??= {})[agent.value] ??= {});
        const list = (level.allowlist ??= []);
        if (list.some((entry) => entry.pattern === value && !entry.argPattern && !entry.cwd))
          return app.toast(`${value} is already allowed for ${agentName(agent.value)}.`);
        list.push({ id: randomId(16), pattern: value });
        void saveDocument(next, `Added ${value} for ${agentName(agent.value)}.`);
      };
      return h(
        'form',
        { class: 'card field-grid', onsubmit: submit, 'aria-labelledby': 'allow-add' },
        h('h3', { id: 'allow-add' }, 'Allow a program'),
        h(
          'div',
          { class: 'field' },
          h('label', { for: 'allow-pattern' }, 'Program'),
          pattern,
          h(
            'p',
            { class: 'muted small', id: 'allow-pattern-help' },
            'A path (globs allowed) or a command name found through PATH. Launchers such as sh, node or git can run anything.',
          ),
        ),
        h('div', { class: 'field' }, h('label', { for: 'allow-agent' }, 'For'), agent),
        h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'primary' }, 'Add to allowlist')),
      );
    }

    function load(): void {
      void loadPending();
      void loadPolicy();
    }

    const stops = [
      gw.on<Pending>('exec.approval.requested', (item) => {
        pending.set(item.id, item);
        renderPending();
      }),
      gw.on<{ id: string }>('exec.approval.resolved', ({ id }) => {
        if (pending.delete(id)) renderPending();
      }),
      onReconnect(app, load),
    ];
    // This page lists every pending request itself: the bar above the views would repeat them.
    const claim = app.approvals.claim(() => true);
    stops.push(() => claim.release());
    load();
    return () => stops.forEach((stop) => stop());
  },
};

function sameEntry(a: Entry, b: Entry): boolean {
  return a.id !== undefined || b.id !== undefined
    ? a.id === b.id
    : a.pattern === b.pattern && a.argPattern === b.argPattern && a.cwd === b.cwd;
}
