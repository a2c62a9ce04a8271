/**
 * Config: the gateway's openclaw.json with secrets redacted, as a form built from
 * `config.schema` (first tab) or as JSON5 text (second tab).
 *
 * The gateway validates every save against the whole schema (kernel and plugins) and
 * refuses it with the list of problems, which the form shows next to the settings they are
 * about. The form sends only what was edited (`config.patch`); the text editor sends the
 * whole file (`config.set`), where secrets come back as the redaction marker and the gateway
 * keeps the stored value. Both send the hash of the file as read, so a save cannot
 * overwrite a change someone else made meanwhile.
 */
import { onReconnect, type View } from '../app.js';
import { errorBox, errorMessage, h, loadingBox, pageHeader, replace } from '../dom.js';
import { GatewayError } from '../gateway.js';
import { ConfigForm, REDACTED, type Schema, type UiHint } from './config-form.js';

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

interface SchemaAnswer {
  schema: Schema;
  uiHints: Record<string, UiHint>;
}

type Tab = 'form' | 'raw';

export const configView: View = {
  title: 'Config',
  mount(root, app, params) {
    const { gw } = app;
    let snapshot: ConfigSnapshot | undefined;
    let schema: SchemaAnswer | undefined;
    let form: ConfigForm | undefined;
    const admin = gw.can('operator.admin');
    const where = h('p', { class: 'muted' });
    const problems = h('div', { role: 'alert' });

    // ── Tabs ──
    const tabs: Record<Tab, HTMLButtonElement> = {
      form: h('button', { type: 'button', role: 'tab', id: 'config-tab-form', 'aria-controls': 'config-form' }, 'Form'),
      raw: h(
        'button',
        { type: 'button', role: 'tab', id: 'config-tab-raw', 'aria-controls': 'config-raw' },
        'Raw JSON5',
      ),
    };
    const order: Tab[] = ['form', 'raw'];
    for (const name of order) {
      tabs[name].addEventListener('click', () => select(name, true));
      tabs[name].addEventListener('keydown', (event) => {
        const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
        if (!step) return;
        event.preventDefault();
        select(order[(order.indexOf(name) + step + order.length) % order.length]!, true);
      });
    }

    // ── Form tab ──
    const formHost = h('div', { class: 'cfg-host', 'aria-busy': 'true' }, loadingBox());
    const dirty = h('span', { class: 'muted small', role: 'status' });
    const saveForm = h('button', { type: 'submit', class: 'primary', disabled: true }, 'Save changes');
    const discard = h(
      'button',
      { type: 'button', disabled: true, onclick: () => (renderForm(form?.openPaths() ?? []), showIssues([], '')) },
      'Discard changes',
    );
    const formPanel = h(
      'form',
      {
        id: 'config-form',
        role: 'tabpanel',
        // The gateway checks every value against the schema and its answer shows at each field.
        novalidate: true,
        'aria-labelledby': 'config-tab-form',
        class: 'cfg-form',
        onsubmit: (event: Event) => (event.preventDefault(), void saveFromForm()),
      },
      h(
        'p',
        { class: 'muted small' },
        admin
          ? 'Open a section to change its settings. Only what you change is saved; secrets stay as stored unless you type a new one.'
          : 'Editing needs the operator.admin scope.',
      ),
      formHost,
      h('div', { class: 'form-actions cfg-actions' }, saveForm, discard, dirty),
    );

    // ── Raw tab ──
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
    const rawPanel = h(
      'form',
      {
        id: 'config-raw',
        role: 'tabpanel',
        'aria-labelledby': 'config-tab-raw',
        class: 'config-form',
        onsubmit: (event: Event) => (event.preventDefault(), void write('config.set')),
      },
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
    );

    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('Config', h('button', { type: 'button', onclick: () => void load() }, 'Reload')),
        where,
        problems,
        h('div', { role: 'tablist', 'aria-label': 'Config editor', class: 'tabs' }, tabs.form, tabs.raw),
        formPanel,
        rawPanel,
      ),
    );

    function select(tab: Tab, focus: boolean): void {
      for (const name of order) {
        const on = name === tab;
        tabs[name].setAttribute('aria-selected', String(on));
        tabs[name].tabIndex = on ? 0 : -1;
      }
      formPanel.hidden = tab !== 'form';
      rawPanel.hidden = tab !== 'raw';
      if (focus) tabs[tab].focus();
      // Remembered in the address without a hashchange (which would mount the view again).
      history.replaceState(null, '', tab === 'raw' ? '#/config?tab=raw' : '#/config');
    }
    select(params.get('tab') === 'raw' ? 'raw' : 'form', false);

    function changed(): void {
      const pending = !!form?.patch();
      saveForm.disabled = !admin || !pending;
      discard.disabled = !pending;
      dirty.textContent = pending ? 'Unsaved changes' : '';
    }

    function renderForm(open: string[]): void {
      if (!snapshot || !schema) return;
      form = new ConfigForm(schema.schema, schema.uiHints, snapshot.config, !admin, changed);
      form.reopen(open);
      replace(formHost, form.element);
      formHost.removeAttribute('aria-busy');
      changed();
    }

    async function load(): Promise<void> {
      try {
        const [read, described] = await Promise.all([
          gw.call<ConfigSnapshot>('config.get'),
          schema ? Promise.resolve(schema) : gw.call<SchemaAnswer>('config.schema'),
        ]);
        snapshot = read;
        schema = described;
        where.textContent = snapshot.exists
          ? `${snapshot.path}`
          : `${snapshot.path} does not exist yet; saving creates it.`;
        editor.value = `${JSON.stringify(snapshot.config, null, 2)}\n`;
        renderForm(form?.openPaths() ?? []);
        showIssues(snapshot.issues, 'The config file has problems:');
      } catch (error) {
        formHost.removeAttribute('aria-busy');
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

    /** The gateway's list of problems from a refused save, if that is why it was refused. */
    function refusal(error: unknown): ConfigIssue[] {
      return error instanceof GatewayError && Array.isArray(error.details.issues)
        ? (error.details.issues as ConfigIssue[])
        : [];
    }

    async function saveFromForm(): Promise<void> {
      const patch = form?.patch();
      if (!patch || !form) return;
      saveForm.disabled = true;
      try {
        const result = await gw.act<{ message: string }>('config.patch', {
          patch,
          ...(snapshot ? { baseHash: snapshot.hash } : {}),
        });
        app.toast(`Saved. ${result.message}`);
        await load();
      } catch (error) {
        const issues = refusal(error);
        if (issues.length) {
          form.showIssues(issues);
          showIssues(issues, 'Not saved: the config would be invalid.');
        } else replace(problems, errorBox(`Not saved: ${errorMessage(error)}`));
        changed();
      }
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
        const issues = refusal(error);
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
