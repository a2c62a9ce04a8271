/**
 * Config: the gateway's openclaw.json with secrets redacted, and an editor for it.
 *
 * The gateway validates every save against the whole schema (kernel and plugins) and
 * refuses it with the list of problems; the secrets it redacted come back as the marker
 * and it keeps the stored value for them. The hash of the file as read is sent along, so a
 * save cannot overwrite a change someone else made meanwhile.
 */
import { onReconnect, type View } from '../app.js';
import { errorBox, errorMessage, h, pageHeader, replace } from '../dom.js';
import { GatewayError } from '../gateway.js';

interface ConfigIssue {
  level: 'error' | 'warning';
  path: string;
  message: string;
}

interface ConfigSnapshot {
  path: string;
  exists: boolean;
  hash: string;
  config: Record<string, unknown>;
  issues: ConfigIssue[];
}

const REDACTED = '__REDACTED__';

export const configView: View = {
  title: 'Config',
  mount(root, app) {
    const { gw } = app;
    let snapshot: ConfigSnapshot | undefined;
    const admin = gw.can('operator.admin');
    const where = h('p', { class: 'muted' });
    const problems = h('div', { role: 'alert' });
    const editor = h('textarea', {
      id: 'config-editor',
      class: 'code-editor',
      spellcheck: 'false',
      autocomplete: 'off',
      readOnly: !admin,
      'aria-describedby': 'config-help',
      rows: '24',
    });
    const save = h('button', { type: 'submit', class: 'primary', disabled: !admin }, 'Save');
    const apply = h(
      'button',
      { type: 'button', disabled: !admin, onclick: () => void write('config.apply') },
      'Save and restart',
    );
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('Config', h('button', { type: 'button', onclick: () => void load() }, 'Reload')),
        where,
        problems,
        h(
          'form',
          { class: 'config-form', onsubmit: (event: Event) => (event.preventDefault(), void write('config.set')) },
          h('label', { for: 'config-editor' }, 'openclaw.json'),
          h(
            'p',
            { class: 'muted small', id: 'config-help' },
            `JSON5 is fine. Saving rewrites the file from what is here, so comments in it are not kept. Secrets show as ${REDACTED}: leave the marker to keep the stored value. ` +
              (admin
                ? 'Safe changes (channel access, models, tool policy) apply at once; saving says when others need a restart.'
                : 'Editing needs the operator.admin scope.'),
          ),
          editor,
          h('div', { class: 'form-actions' }, save, apply),
        ),
      ),
    );

    async function load(): Promise<void> {
      try {
        snapshot = await gw.call<ConfigSnapshot>('config.get');
        where.textContent = snapshot.exists
          ? `${snapshot.path}`
          : `${snapshot.path} does not exist yet; saving creates it.`;
        editor.value = `${JSON.stringify(snapshot.config, null, 2)}\n`;
        showIssues(snapshot.issues, 'The config file has problems:');
      } catch (error) {
        replace(
          problems,
          errorBox(error, () => void load()),
        );
      }
    }

    function showIssues(issues: ConfigIssue[], heading: string): void {
      if (!issues.length) return replace(problems);
      replace(
        problems,
        h(
          'div',
          { class: `notice ${issues.some((issue) => issue.level === 'error') ? 'error' : 'warn'}` },
          h('p', null, heading),
          h(
            'ul',
            null,
            issues.map((issue) => h('li', null, h('code', null, issue.path || '(root)'), ` ${issue.message}`)),
          ),
        ),
      );
    }

    async function write(method: 'config.set' | 'config.apply'): Promise<void> {
      save.disabled = apply.disabled = true;
      try {
        // The gateway says whether the change is live, is being applied by a restart, or needs one.
        const result = await gw.act<{ message: string }>(method, {
          raw: editor.value,
          ...(snapshot ? { baseHash: snapshot.hash } : {}),
        });
        app.toast(`Saved. ${result.message}`);
        await load();
      } catch (error) {
        const issues =
          error instanceof GatewayError && Array.isArray(error.details.issues)
            ? (error.details.issues as ConfigIssue[])
            : [];
        if (issues.length) showIssues(issues, 'Not saved: the config would be invalid.');
        else replace(problems, errorBox(`Not saved: ${errorMessage(error)}`));
      } finally {
        save.disabled = apply.disabled = !admin;
      }
    }

    const stopWatching = onReconnect(app, () => void load());
    void load();
    return stopWatching;
  },
};
