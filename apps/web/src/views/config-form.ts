/**
 * The config as a form, built from the JSON Schema `config.schema` sends: a collapsible
 * section per top-level key, an input per setting (text, number, checkbox, a select for a
 * fixed set of values, one line per item for lists of strings), nested objects as collapsible
 * groups, named entries (providers, accounts) that can be added and removed, and a JSON box
 * for the shapes a form cannot say well (lists of objects, unions).
 *
 * Every edit changes a draft copy of the config; saving sends the difference as a JSON merge
 * patch, so what was not touched — a redacted secret above all — is never sent at all.
 */
import { h, replace, type Child } from '../dom.js';

export type Schema = Record<string, any>;
type Segment = string | number;
export interface UiHint {
  label?: string;
  help?: string;
  placeholder?: string;
  sensitive?: boolean;
}
export interface FieldIssue {
  path: string;
  message: string;
}

export const REDACTED = '__REDACTED__';
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;
/** The gateway redacts values under these key names (sdk/redact.ts); the form masks them too. */
const SECRET_KEY =
  /(token|api[-_]?key|password|passwd|passphrase|secret|private[-_]?key|credentials?|cookie|authorization)$/i;

/** A config path as the gateway writes it in issues: `a.b[0]["odd key"]`. */
export function formatPath(path: readonly Segment[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENT.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The merge patch that turns `from` into `to` (null deletes a key; lists are replaced whole). */
export function diffPatch(from: unknown, to: unknown): unknown {
  if (!isObject(from) || !isObject(to)) return to === undefined ? null : to;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    if (!same(from[key], value)) patch[key] = diffPatch(from[key], value);
  }
  return patch;
}

interface Field {
  key: string;
  wrapper: HTMLElement;
  control: HTMLElement;
  error: HTMLElement;
}

type Kind =
  | { kind: 'string' }
  | { kind: 'number'; integer: boolean }
  | { kind: 'boolean' }
  | { kind: 'enum'; values: unknown[] }
  | { kind: 'list' }
  | { kind: 'group'; schema: Schema }
  | { kind: 'record'; item: Schema }
  | { kind: 'json' };

export class ConfigForm {
  readonly element: HTMLElement;
  private draft: Record<string, unknown>;
  private readonly fields: Field[] = [];
  private counter = 0;

  constructor(
    private readonly schema: Schema,
    private readonly hints: Record<string, UiHint>,
    private readonly config: Record<string, unknown>,
    private readonly readOnly: boolean,
    private readonly onChange: () => void,
  ) {
    this.draft = structuredClone(config);
    const keys = Object.keys(schema.properties ?? {}).filter((key) => key !== '$schema');
    this.element = h(
      'div',
      { class: 'cfg-sections' },
      keys.map((key) => this.section(key, this.resolve(schema.properties[key]))),
    );
  }

  /** The merge patch of every edit, or undefined when the draft equals the config read. */
  patch(): Record<string, unknown> | undefined {
    const patch = diffPatch(this.config, this.draft) as Record<string, unknown>;
    return Object.keys(patch).length ? patch : undefined;
  }

  /** Paths of the groups open now, to open again after the form is rebuilt. */
  openPaths(): string[] {
    return [...this.element.querySelectorAll<HTMLDetailsElement>('details[open]')].map(
      (details) => details.dataset.path!,
    );
  }

  reopen(paths: readonly string[]): void {
    const wanted = new Set(paths);
    for (const details of this.element.querySelectorAll<HTMLDetailsElement>('details[data-path]'))
      if (wanted.has(details.dataset.path!)) details.open = true;
  }

  /**
   * Show each problem next to the setting it is about (the closest field on its path, with
   * its groups opened); returns those no field holds.
   */
  showIssues(issues: readonly FieldIssue[]): FieldIssue[] {
    for (const field of this.fields) {
      replace(field.error);
      field.control.removeAttribute('aria-invalid');
    }
    const unplaced: FieldIssue[] = [];
    let first: HTMLElement | undefined;
    for (const issue of issues) {
      const field = this.fields
        .filter(
          (candidate) =>
            issue.path === candidate.key ||
            issue.path.startsWith(`${candidate.key}.`) ||
            issue.path.startsWith(`${candidate.key}[`),
        )
        .sort((a, b) => b.key.length - a.key.length)[0];
      if (!field) {
        unplaced.push(issue);
        continue;
      }
      const where = issue.path === field.key ? '' : `${issue.path.slice(field.key.length).replace(/^\./, '')}: `;
      field.error.append(h('span', null, `${where}${issue.message}`));
      field.control.setAttribute('aria-invalid', 'true');
      for (let node = field.wrapper.parentElement; node; node = node.parentElement)
        if (node instanceof HTMLDetailsElement) node.open = true;
      first ??= field.control;
    }
    first?.focus();
    return unplaced;
  }

  // ── Building ────────────────────────────────────────────────────────────────────

  private section(key: string, schema: Schema): HTMLElement {
    return h(
      'details',
      { class: 'cfg-section', 'data-path': key },
      h(
        'summary',
        null,
        h('h2', null, key),
        schema.description ? h('span', { class: 'muted small' }, schema.description) : null,
      ),
      h('div', { class: 'cfg-body' }, this.node(key, schema, [key], true)),
    );
  }

  /** A setting, a group or a list of named entries, for the value at `path`. */
  private node(label: string, schema: Schema, path: Segment[], inline = false): Child {
    const kind = this.classify(schema, this.get(path));
    if (kind.kind === 'group') {
      const children = Object.entries(kind.schema.properties ?? {}).map(([key, child]) =>
        this.node(key, this.resolve(child as Schema), [...path, key]),
      );
      return inline ? children : this.group(label, schema, path, children);
    }
    if (kind.kind === 'record') return this.record(label, schema, kind.item, path, inline);
    return this.field(label, schema, path, kind);
  }

  private group(label: string, schema: Schema, path: Segment[], children: Child[]): HTMLDetailsElement {
    return h(
      'details',
      { class: 'cfg-group', 'data-path': formatPath(path) },
      h(
        'summary',
        null,
        h('span', { class: 'cfg-name' }, this.hint(path)?.label ?? label),
        schema.description ? h('span', { class: 'muted small' }, schema.description) : null,
      ),
      h('div', { class: 'cfg-body' }, children),
    );
  }

  /** Named entries (`models.providers.<id>`): one group each, with Remove, and a way to add one. */
  private record(label: string, schema: Schema, item: Schema, path: Segment[], inline: boolean): Child {
    const list = h('div', { class: 'cfg-entries' });
    const entry = (name: string) => {
      const remove = h(
        'button',
        {
          type: 'button',
          class: 'danger small-button',
          disabled: this.readOnly,
          'aria-label': `Remove ${formatPath([...path, name])}`,
          onclick: () => {
            this.set([...path, name], undefined);
            group.remove();
          },
        },
        'Remove',
      );
      const group = this.group(name, item, [...path, name], [this.node(name, item, [...path, name], true), remove]);
      return group;
    };
    for (const name of Object.keys((this.get(path) as Record<string, unknown> | undefined) ?? {}))
      list.append(entry(name));
    const id = `cfg-${++this.counter}`;
    const name = h('input', { type: 'text', id, placeholder: 'name', disabled: this.readOnly, autocomplete: 'off' });
    const add = () => {
      const value = name.value.trim();
      if (!value || this.get([...path, value]) !== undefined) return name.focus();
      this.set([...path, value], {});
      const added = entry(value);
      added.open = true;
      list.append(added);
      name.value = '';
      added.querySelector<HTMLElement>('input, select, textarea')?.focus();
    };
    const adder = h(
      'div',
      { class: 'cfg-add' },
      h('label', { for: id }, `Add to ${label}`),
      name,
      h('button', { type: 'button', disabled: this.readOnly, onclick: add }, 'Add'),
    );
    name.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') (event.preventDefault(), add());
    });
    return inline ? [list, adder] : this.group(label, schema, path, [list, adder]);
  }

  private field(label: string, schema: Schema, path: Segment[], kind: Exclude<Kind, { kind: 'group' | 'record' }>) {
    const key = formatPath(path);
    const id = `cfg-${++this.counter}`;
    const hint = this.hint(path);
    const help = hint?.help ?? schema.description;
    const error = h('p', { class: 'cfg-error', id: `${id}-error`, 'aria-live': 'polite' });
    const described = [help ? `${id}-help` : '', `${id}-error`].filter(Boolean).join(' ');
    const value = this.get(path);
    const common = { id, 'aria-describedby': described, disabled: this.readOnly, 'data-path': key };
    let control: HTMLElement;
    switch (kind.kind) {
      case 'string': {
        const redacted = value === REDACTED;
        const last = path[path.length - 1];
        const secret = redacted || hint?.sensitive === true || (typeof last === 'string' && SECRET_KEY.test(last));
        const input = h('input', {
          ...common,
          type: secret ? 'password' : 'text',
          autocomplete: secret ? 'new-password' : 'off',
          spellcheck: 'false',
          value: redacted || typeof value !== 'string' ? '' : value,
          placeholder: redacted ? 'Stored (hidden); type to replace' : (hint?.placeholder ?? this.example(schema)),
        });
        input.addEventListener('input', () => {
          if (redacted && input.value === '') return this.set(path, value);
          this.set(path, input.value === '' ? undefined : input.value);
        });
        control = input;
        break;
      }
      case 'number': {
        const input = h('input', {
          ...common,
          type: 'number',
          inputmode: kind.integer ? 'numeric' : 'decimal',
          step: kind.integer ? '1' : 'any',
          min: schema.minimum,
          max: schema.maximum,
          value: typeof value === 'number' ? String(value) : '',
          placeholder: this.example(schema),
        });
        input.addEventListener('input', () => {
          const text = input.value.trim();
          // The browser empties a number input holding text it cannot read: say so rather than delete the key.
          if (text === '' && input.validity.badInput) return this.local(error, input, 'Enter a number.');
          this.local(error, input);
          this.set(path, text === '' ? undefined : Number(text));
        });
        control = input;
        break;
      }
      case 'boolean': {
        const input = h('input', {
          ...common,
          type: 'checkbox',
          checked: typeof value === 'boolean' ? value : schema.default === true,
        });
        input.addEventListener('change', () => this.set(path, input.checked));
        return this.wrap(key, label, id, help, h('div', { class: 'cfg-check' }, input), error, input, true);
      }
      case 'enum': {
        const select = h(
          'select',
          common,
          h('option', { value: '' }, schema.default !== undefined ? `Default (${String(schema.default)})` : 'Not set'),
          kind.values.map((option, index) =>
            h('option', { value: String(index), selected: same(option, value) }, String(option)),
          ),
        );
        select.addEventListener('change', () =>
          this.set(path, select.value === '' ? undefined : kind.values[Number(select.value)]),
        );
        control = select;
        break;
      }
      case 'list': {
        const area = h('textarea', {
          ...common,
          rows: String(Math.min(8, Math.max(2, Array.isArray(value) ? value.length + 1 : 2))),
          spellcheck: 'false',
          value: Array.isArray(value) ? value.join('\n') : '',
          placeholder: 'One per line',
        });
        area.addEventListener('input', () => {
          const lines = area.value
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean);
          this.set(path, lines.length || Array.isArray(value) ? lines : undefined);
        });
        control = area;
        break;
      }
      case 'json': {
        const area = h('textarea', {
          ...common,
          class: 'cfg-json',
          rows: '4',
          spellcheck: 'false',
          value: value === undefined ? '' : JSON.stringify(value, null, 2),
          placeholder: 'JSON',
        });
        area.addEventListener('input', () => {
          if (area.value.trim() === '') return (this.local(error, area), this.set(path, undefined));
          try {
            this.set(path, JSON.parse(area.value));
            this.local(error, area);
          } catch (problem) {
            this.local(error, area, `Not valid JSON yet: ${(problem as Error).message}`);
          }
        });
        control = area;
        break;
      }
    }
    return this.wrap(key, label, id, help, control, error, control, false);
  }

  private wrap(
    key: string,
    label: string,
    id: string,
    help: string | undefined,
    body: HTMLElement,
    error: HTMLElement,
    control: HTMLElement,
    inlineLabel: boolean,
  ): HTMLElement {
    const wrapper = h(
      'div',
      { class: `cfg-field${inlineLabel ? ' cfg-inline' : ''}`, 'data-field': key },
      inlineLabel ? body : null,
      h('label', { for: id, class: 'cfg-name' }, this.hintAt(key)?.label ?? label),
      inlineLabel ? null : body,
      help ? h('p', { class: 'cfg-help muted small', id: `${id}-help` }, help) : null,
      error,
    );
    this.fields.push({ key, wrapper, control, error });
    return wrapper;
  }

  /** A problem found in the browser (not JSON, not a number), shown until the input is fixed. */
  private local(error: HTMLElement, control: HTMLElement, message?: string): void {
    replace(error, message ?? null);
    if (message) control.setAttribute('aria-invalid', 'true');
    else control.removeAttribute('aria-invalid');
  }

  // ── Schema and values ───────────────────────────────────────────────────────────

  private classify(schema: Schema, value: unknown): Kind {
    const options = this.choices(schema);
    if (options) return { kind: 'enum', values: options };
    const branches: Schema[] = (schema.anyOf ?? schema.oneOf ?? []).map((branch: Schema) => this.resolve(branch));
    if (branches.length) {
      // A union: the branch the current value fits, or for an unset value the first simple one.
      const fits =
        branches.find((branch) => this.fits(branch, value)) ?? (value === undefined ? branches[0] : undefined);
      const kind = fits ? this.classify(fits, value) : undefined;
      return kind && kind.kind !== 'group' && kind.kind !== 'record' ? kind : { kind: 'json' };
    }
    const type = Array.isArray(schema.type) ? schema.type.find((name: string) => name !== 'null') : schema.type;
    if (type === 'string') return { kind: 'string' };
    if (type === 'number' || type === 'integer') return { kind: 'number', integer: type === 'integer' };
    if (type === 'boolean') return { kind: 'boolean' };
    if (type === 'array') {
      const items = this.resolve(schema.items ?? {});
      return items.type === 'string' || (this.choices(items)?.every((item) => typeof item === 'string') ?? false)
        ? { kind: 'list' }
        : { kind: 'json' };
    }
    if (type === 'object' || schema.properties) {
      if (value !== undefined && !isObject(value)) return { kind: 'json' };
      if (schema.properties && !schema.patternProperties) return { kind: 'group', schema };
      const item = this.resolve(
        isObject(schema.additionalProperties)
          ? schema.additionalProperties
          : (Object.values(schema.patternProperties ?? {})[0] ?? {}),
      );
      if (!schema.properties && item.properties) return { kind: 'record', item };
    }
    return { kind: 'json' };
  }

  /** The fixed values a setting takes (enum, const, or a union of those), if that is what it is. */
  private choices(schema: Schema): unknown[] | undefined {
    if (Array.isArray(schema.enum)) return schema.enum;
    if ('const' in schema) return [schema.const];
    const branches: Schema[] | undefined = schema.anyOf ?? schema.oneOf;
    if (!branches?.length) return undefined;
    const all: unknown[] = [];
    for (const branch of branches) {
      const values = this.choices(this.resolve(branch));
      if (!values) return undefined;
      all.push(...values);
    }
    return all;
  }

  private fits(schema: Schema, value: unknown): boolean {
    if (value === undefined) return false;
    const type = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (typeof value === 'string') return type.includes('string');
    if (typeof value === 'number') return type.includes('number') || type.includes('integer');
    if (typeof value === 'boolean') return type.includes('boolean');
    if (Array.isArray(value)) return type.includes('array');
    return type.includes('object');
  }

  /** `$ref`s point into the schema itself (`#/$defs/...`). */
  private resolve(schema: Schema): Schema {
    let current = schema;
    for (let hops = 0; typeof current?.$ref === 'string' && hops < 8; hops++) {
      const target = (current.$ref as string)
        .replace(/^#\/?/, '')
        .split('/')
        .filter(Boolean)
        .reduce<any>((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], this.schema);
      if (!target) break;
      const { $ref: _ref, ...rest } = current;
      current = { ...target, ...rest };
    }
    return current ?? {};
  }

  private example(schema: Schema): string | undefined {
    if (schema.default !== undefined && typeof schema.default !== 'object') return `Default: ${schema.default}`;
    return Array.isArray(schema.examples) && schema.examples.length ? String(schema.examples[0]) : undefined;
  }

  private hint(path: Segment[]): UiHint | undefined {
    return this.hintAt(formatPath(path));
  }

  private hintAt(key: string): UiHint | undefined {
    return this.hints[key];
  }

  private get(path: readonly Segment[]): unknown {
    let node: unknown = this.draft;
    for (const segment of path) node = (node as Record<string | number, unknown> | undefined)?.[segment];
    return node;
  }

  /** Set a value in the draft (undefined removes it), creating the objects on the way. */
  private set(path: readonly Segment[], value: unknown): void {
    let node = this.draft as Record<string | number, unknown>;
    for (const segment of path.slice(0, -1)) {
      if (node[segment] === null || typeof node[segment] !== 'object') node[segment] = {};
      node = node[segment] as Record<string | number, unknown>;
    }
    const last = path[path.length - 1]!;
    if (value !== undefined) node[last] = value;
    else {
      delete node[last];
      this.prune(path.slice(0, -1));
    }
    this.onChange();
  }

  /** Objects a cleared field leaves empty go too, unless the file had them. */
  private prune(path: readonly Segment[]): void {
    for (let end = path.length; end > 0; end--) {
      const at = path.slice(0, end);
      const value = this.get(at);
      if (!isObject(value) || Object.keys(value).length > 0) return;
      let original: unknown = this.config;
      for (const segment of at) original = (original as Record<string | number, unknown> | undefined)?.[segment];
      if (original !== undefined) return;
      delete (this.get(at.slice(0, -1)) as Record<string | number, unknown>)[at[at.length - 1]!];
    }
  }
}
