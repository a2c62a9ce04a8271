/**
 * Agents: every configured agent from `agents.list` — how it presents itself, its model and
 * fallbacks, and its workspace — with links to chat with it and to its skills. Agents are
 * added and changed in the config (`agents.list` on the Config page); claw's gateway has no
 * agents.create/update methods, so this page only reads.
 */
import { onReconnect, type View } from '../app.js';
import { badge, errorBox, h, loadingBox, pageHeader, replace } from '../dom.js';

interface Agent {
  id: string;
  name?: string;
  identity?: { name?: string; emoji?: string; theme?: string; avatarUrl?: string };
  model?: { primary: string; fallbacks: string[] };
  workspace?: string;
}

interface AgentsAnswer {
  defaultId: string;
  mainKey: string;
  scope: string;
  agents: Agent[];
}

export const agentsView: View = {
  title: 'Agents',
  mount(root, app) {
    const { gw } = app;
    const summary = h('p', { class: 'muted small' });
    const body = h('div', { 'aria-busy': 'true' }, loadingBox());
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader(
          'Agents',
          h('a', { class: 'button', href: '#/config' }, 'Edit in Config'),
          h('button', { type: 'button', onclick: () => void load() }, 'Refresh'),
        ),
        summary,
        body,
      ),
    );

    function card(agent: Agent, answer: AgentsAnswer): HTMLElement {
      const title = agent.identity?.name ?? agent.name ?? agent.id;
      const session = `agent:${agent.id}:${answer.mainKey}`;
      return h(
        'article',
        { class: 'card agent', 'data-agent': agent.id, 'aria-label': title },
        h(
          'header',
          { class: 'job-head' },
          h('h2', null, agent.identity?.emoji ? `${agent.identity.emoji} ` : '', title),
          agent.id === answer.defaultId ? badge('Default', 'info') : null,
        ),
        h(
          'dl',
          null,
          h('dt', null, 'Id'),
          h('dd', null, h('code', null, agent.id)),
          h('dt', null, 'Model'),
          h(
            'dd',
            null,
            agent.model ? h('code', null, agent.model.primary) : h('span', { class: 'warn-text' }, 'none configured'),
          ),
          agent.model?.fallbacks.length
            ? [h('dt', null, 'Fallbacks'), h('dd', null, agent.model.fallbacks.join(', '))]
            : null,
          agent.identity?.theme ? [h('dt', null, 'Theme'), h('dd', null, agent.identity.theme)] : null,
          h('dt', null, 'Workspace'),
          h('dd', null, h('code', null, agent.workspace ?? '—')),
        ),
        h(
          'div',
          { class: 'row-actions' },
          h('a', { class: 'button', href: `#/chat?session=${encodeURIComponent(session)}` }, 'Chat'),
          h('a', { class: 'button', href: `#/skills?agent=${encodeURIComponent(agent.id)}` }, 'Skills'),
        ),
      );
    }

    async function load(): Promise<void> {
      body.setAttribute('aria-busy', 'true');
      try {
        const answer = await gw.call<AgentsAnswer>('agents.list', {});
        summary.textContent = `${answer.agents.length} agent${answer.agents.length === 1 ? '' : 's'}; sessions are ${answer.scope === 'global' ? 'shared by everyone' : 'kept per sender'}.`;
        replace(
          body,
          h(
            'div',
            { class: 'cards' },
            answer.agents.map((agent) => card(agent, answer)),
          ),
        );
      } catch (error) {
        replace(
          body,
          errorBox(error, () => void load()),
        );
      } finally {
        body.removeAttribute('aria-busy');
      }
    }

    const stopWatching = onReconnect(app, () => void load());
    void load();
    return stopWatching;
  },
};
