/**
 * Skills: what an agent can use (`skills.status`), where each skill comes from, and why one
 * is not available (a missing program or variable, an allowlist, a shadowing copy). Turning
 * one off or on writes `skills.entries.<key>.enabled` with `config.patch`, against the hash of
 * the config just read, as OpenClaw's config-mode `skills.update` would.
 */
import { onReconnect, type View } from '../app.js';
import { badge, errorBox, errorMessage, h, loadingBox, pageHeader, replace } from '../dom.js';

interface Skill {
  name: string;
  description?: string;
  source: string;
  pluginId?: string;
  skillKey: string;
  emoji?: string;
  homepage?: string;
  state: 'eligible' | 'disabled' | 'blocked' | 'excluded' | 'missing' | 'invalid' | 'shadowed';
  eligible: boolean;
  reasons: string[];
  userInvocable: boolean;
  inPrompt: boolean;
  filePath: string;
}

interface Report {
  agentId: string;
  workspaceDir: string;
  skills: Skill[];
  prompt: { chars: number; maxChars: number; skills: number; omitted: string[] };
}

const TONE: Record<Skill['state'], 'ok' | 'warn' | 'bad' | 'muted'> = {
  eligible: 'ok',
  disabled: 'muted',
  blocked: 'warn',
  excluded: 'muted',
  missing: 'warn',
  invalid: 'bad',
  shadowed: 'muted',
};
const LABEL: Record<Skill['state'], string> = {
  eligible: 'Available',
  disabled: 'Off',
  blocked: 'Blocked',
  excluded: 'Not for this agent',
  missing: 'Missing requirements',
  invalid: 'Invalid',
  shadowed: 'Shadowed',
};

export const skillsView: View = {
  title: 'Skills',
  mount(root, app, params) {
    const { gw } = app;
    const admin = gw.can('operator.admin');
    let report: Report | undefined;
    const agent = h('select', { id: 'skills-agent', onchange: () => void load() });
    const filter = h('input', {
      type: 'search',
      id: 'skills-filter',
      placeholder: 'Filter by name or description',
      oninput: () => render(),
    });
    const summary = h('p', { class: 'muted small' });
    const body = h('div', { class: 'stack', 'aria-busy': 'true' }, loadingBox());
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('Skills', h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
        h(
          'div',
          { class: 'toolbar' },
          h('label', { for: 'skills-agent' }, 'Agent'),
          agent,
          h('label', { for: 'skills-filter' }, 'Filter'),
          filter,
        ),
        summary,
        body,
      ),
    );

    async function loadAgents(): Promise<void> {
      try {
        const result = await gw.call<{ defaultId: string; agents: Array<{ id: string; name?: string }> }>(
          'agents.list',
          {},
        );
        const chosen = agent.value || params.get('agent') || result.defaultId;
        replace(
          agent,
          result.agents.map((item) =>
            h(
              'option',
              { value: item.id, selected: item.id === chosen },
              item.name ? `${item.name} (${item.id})` : item.id,
            ),
          ),
        );
      } catch {
        // The default agent's skills still show: the selector is only a convenience.
      }
    }

    async function load(): Promise<void> {
      body.setAttribute('aria-busy', 'true');
      try {
        report = await gw.call<Report>('skills.status', agent.value ? { agentId: agent.value } : {});
        render();
      } catch (error) {
        replace(
          body,
          errorBox(error, () => void load()),
        );
      } finally {
        body.removeAttribute('aria-busy');
      }
    }

    async function setEnabled(skill: Skill, enabled: boolean): Promise<void> {
      try {
        const { hash } = await gw.call<{ hash: string }>('config.get');
        const result = await gw.act<{ message: string }>('config.patch', {
          patch: { skills: { entries: { [skill.skillKey]: { enabled } } } },
          baseHash: hash,
        });
        app.toast(`${skill.name} is ${enabled ? 'on' : 'off'}. ${result.message}`);
      } catch (error) {
        app.toast(`Could not change ${skill.name}: ${errorMessage(error)}`, 'error');
      }
      await load();
    }

    function render(): void {
      if (!report) return;
      const query = filter.value.trim().toLowerCase();
      const shown = report.skills.filter(
        (skill) => !query || `${skill.name} ${skill.description ?? ''}`.toLowerCase().includes(query),
      );
      const available = report.skills.filter((skill) => skill.eligible).length;
      summary.textContent = `${available} of ${report.skills.length} available to ${report.agentId}; ${report.prompt.skills} listed in its prompt (${report.prompt.chars.toLocaleString()} of ${report.prompt.maxChars.toLocaleString()} characters). Workspace: ${report.workspaceDir}`;
      if (!report.skills.length) return replace(body, h('p', { class: 'empty' }, 'No skills found.'));
      replace(
        body,
        shown.length
          ? h('div', { class: 'cards' }, shown.map(card))
          : h('p', { class: 'empty' }, 'No skill matches the filter.'),
      );
    }

    function card(skill: Skill): HTMLElement {
      const off = skill.state === 'disabled';
      return h(
        'article',
        { class: 'card skill', 'data-skill': skill.skillKey, 'aria-label': skill.name },
        h(
          'header',
          { class: 'job-head' },
          h('h2', null, skill.emoji ? `${skill.emoji} ` : '', skill.name),
          badge(LABEL[skill.state], TONE[skill.state]),
          skill.inPrompt ? badge('In prompt', 'info') : null,
        ),
        skill.description ? h('p', null, skill.description) : null,
        skill.reasons.length
          ? h(
              'ul',
              { class: 'reasons', 'aria-label': `Why ${skill.name} is not available` },
              skill.reasons.map((reason) => h('li', null, reason)),
            )
          : null,
        h(
          'p',
          { class: 'muted small' },
          `${skill.source}${skill.pluginId ? ` (plugin ${skill.pluginId})` : ''}${skill.userInvocable ? ` · /${skill.name}` : ''}`,
        ),
        admin
          ? h(
              'div',
              { class: 'row-actions' },
              h(
                'button',
                {
                  type: 'button',
                  'aria-label': `${off ? 'Enable' : 'Disable'} ${skill.name}`,
                  onclick: () => void setEnabled(skill, off),
                },
                off ? 'Enable' : 'Disable',
              ),
            )
          : null,
      );
    }

    const stops = [gw.on('skills.changed', () => void load()), onReconnect(app, () => void load())];
    void loadAgents().then(load);
    return () => stops.forEach((stop) => stop());
  },
};
