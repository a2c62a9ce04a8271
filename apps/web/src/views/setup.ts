/**
 * Setup: the onboarding wizard `claw onboard` runs, driven over the gateway's `wizard.*`
 * methods. The gateway decides every step (which providers, the live test call before a key
 * is saved, the channel token check, the WhatsApp QR); this view only renders whatever step
 * comes next and sends the answer back, so the terminal and the browser can never disagree
 * about what setting something up means.
 */
import { onReconnect, type View } from '../app.js';
import { errorBox, errorMessage, h, pageHeader, replace, type Child } from '../dom.js';

type Section = 'model' | 'workspace' | 'gateway' | 'channels' | 'daemon';

interface WizardOption {
  value: string;
  label: string;
  hint?: string;
}

interface WizardStep {
  id: string;
  type: 'note' | 'select' | 'text' | 'confirm' | 'multiselect' | 'progress';
  title?: string;
  message?: string;
  options?: WizardOption[];
  initialValue?: unknown;
  placeholder?: string;
  sensitive?: boolean;
  error?: string;
  qr?: string;
}

interface WizardResponse {
  sessionId: string;
  done: boolean;
  status: 'running' | 'done' | 'cancelled' | 'error';
  step?: WizardStep;
  error?: string;
}

type Answer = string | boolean | string[];

const ENTRIES: Array<{ section?: Section; title: string; text: string }> = [
  {
    section: 'model',
    title: 'Set up a model',
    text: 'Pick a provider (OpenAI, Anthropic, any OpenAI-compatible server, a local model) and enter its key. Nothing is saved until a live test call answers.',
  },
  {
    section: 'channels',
    title: 'Add a channel',
    text: 'Any chat app whose plugin is on (Telegram, Discord, Slack, IRC, …): its tokens or server settings, checked with the platform before saving; WhatsApp by scanning a QR code with your phone.',
  },
  {
    title: 'Full setup',
    text: 'Model, workspace, gateway access and channels, one after the other. Shows what is set now and changes only what you choose.',
  },
];

const SECTIONS = new Set<string>(['model', 'workspace', 'gateway', 'channels', 'daemon']);
/** Live tests and token checks call out to providers: give them far longer than a plain call. */
const STEP_TIMEOUT_MS = 180_000;
/** This tab's running wizard, so a reload picks it up where it was. */
const SESSION_KEY = 'claw.setup.session';

export const setupView: View = {
  title: 'Setup',
  mount(root, app, params) {
    const { gw } = app;
    const body = h('div', { class: 'setup-body' });
    replace(root, h('div', { class: 'page setup' }, pageHeader('Setup'), body));

    let sessionId: string | undefined;
    let left = false;
    /** The connection dropped mid-step: the wizard waits on the gateway, resume when it is back. */
    let lost = false;
    /** Skip was pressed on a WhatsApp QR while its wait was in flight: answer the next QR with no. */
    let skipQr = false;

    function remember(id: string | undefined): void {
      sessionId = id;
      try {
        if (id) sessionStorage.setItem(SESSION_KEY, id);
        else sessionStorage.removeItem(SESSION_KEY);
      } catch {
        // Storage can be off (private modes); a reload then starts over and the old wizard expires.
      }
    }

    function stored(): string | undefined {
      try {
        return sessionStorage.getItem(SESSION_KEY) ?? undefined;
      } catch {
        return undefined;
      }
    }

    /** Counts requests: an answer to one that was overtaken (cancelled, restarted) is dropped. */
    let turn = 0;

    function follow(request: Promise<WizardResponse | undefined>): void {
      const mine = ++turn;
      request.then(
        (response) => mine === turn && response && show(response),
        (error: unknown) => mine === turn && failed(error),
      );
    }

    function cancelRunning(): void {
      turn++;
      skipQr = false;
      const id = sessionId;
      remember(undefined);
      if (id) void gw.call('wizard.cancel', { sessionId: id }).catch(() => undefined);
    }

    function busy(message: string): void {
      replace(
        body,
        h(
          'div',
          { class: 'setup-busy', role: 'status', 'aria-busy': 'true' },
          h('span', { class: 'setup-spinner', 'aria-hidden': 'true' }),
          h('span', null, message),
        ),
      );
    }

    function showEntries(notice?: Child): void {
      const cards = ENTRIES.map((entry) =>
        h(
          'section',
          { class: 'card setup-entry', 'data-section': entry.section ?? 'all' },
          h('h2', null, entry.title),
          h('p', { class: 'muted' }, entry.text),
          h(
            'button',
            {
              type: 'button',
              class: entry.section === 'model' ? 'primary' : undefined,
              onclick: () => start(entry.section),
            },
            entry.section ? `${entry.title}…` : 'Start full setup…',
          ),
        ),
      );
      replace(
        body,
        notice ?? null,
        gw.can('operator.admin')
          ? null
          : h('p', { class: 'notice warn' }, 'Setup changes the configuration and needs the operator.admin scope.'),
        h(
          'p',
          { class: 'muted' },
          'The same steps as ',
          h('code', null, 'claw onboard'),
          ' in a terminal. Secrets you enter go to the gateway only and are never shown again in full.',
        ),
        h('div', { class: 'cards setup-entries' }, cards),
      );
    }

    function start(section?: Section): void {
      busy('Starting setup…');
      follow(gw.call<WizardResponse>('wizard.start', section ? { section } : {}, STEP_TIMEOUT_MS));
    }

    /** Back to the step the gateway is waiting on (after a reload or a dropped connection). */
    function resume(id: string): void {
      lost = false;
      busy('Picking up the setup where it was…');
      follow(
        (async () => {
          let status: WizardResponse['status'];
          try {
            ({ status } = await gw.call<{ status: WizardResponse['status'] }>('wizard.status', { sessionId: id }));
          } catch (error) {
            if (gw.state.phase !== 'open') throw error;
            status = 'cancelled'; // expired, or the gateway restarted: nothing to pick up
          }
          if (status !== 'running') {
            remember(undefined);
            showEntries();
            return undefined;
          }
          remember(id);
          // Without an answer the gateway sends its current step again.
          return gw.call<WizardResponse>('wizard.next', { sessionId: id }, STEP_TIMEOUT_MS);
        })(),
      );
    }

    function advance(stepId: string, value?: Answer): Promise<WizardResponse> {
      if (!sessionId) return Promise.reject(new Error('no setup is running'));
      const answer = value === undefined ? { stepId } : { stepId, value };
      return gw.call<WizardResponse>('wizard.next', { sessionId, answer }, STEP_TIMEOUT_MS);
    }

    function failed(error: unknown): void {
      if (left) return;
      if (sessionId && gw.state.phase !== 'open') {
        // The connection dropped, not the wizard: it waits on the gateway for this tab.
        lost = true;
        const id = sessionId;
        return replace(
          body,
          errorBox(`Lost the connection to the gateway (${errorMessage(error)}). Setup goes on when it is back.`, () =>
            resume(id),
          ),
        );
      }
      cancelRunning();
      showEntries(errorBox(`Setup stopped: ${errorMessage(error)}`));
    }

    function show(response: WizardResponse): void {
      if (left) return;
      if (response.status !== 'running' || response.done) {
        remember(undefined);
        return finished(response);
      }
      remember(response.sessionId);
      if (!response.step) return stillWorking(response.sessionId);
      renderStep(response.step);
    }

    /**
     * Running with no step: the gateway is still busy with an earlier answer (this tab came
     * back mid-check). Ask again shortly for the step it gets to.
     */
    function stillWorking(id: string): void {
      busy('The gateway is still working on the last answer…');
      const mine = turn;
      window.setTimeout(() => {
        if (mine === turn && !left) follow(gw.call<WizardResponse>('wizard.next', { sessionId: id }, STEP_TIMEOUT_MS));
      }, 1000);
    }

    function finished(response: WizardResponse): void {
      if (response.status === 'cancelled') return showEntries(h('p', { class: 'notice info' }, 'Setup cancelled.'));
      if (response.status === 'error')
        return showEntries(errorBox(`Setup stopped: ${response.error ?? 'the wizard failed without saying why'}`));
      replace(
        body,
        h(
          'section',
          { class: 'card setup-done', 'aria-labelledby': 'setup-done-title' },
          h('h2', { id: 'setup-done-title', tabindex: '-1' }, 'All set'),
          h('p', { class: 'setup-message' }, response.step?.message ?? 'Setup is finished: what you chose is saved.'),
          h(
            'div',
            { class: 'form-actions' },
            h('a', { class: 'button primary', href: '#/chat' }, 'Go to Chat'),
            h('button', { type: 'button', onclick: () => showEntries() }, 'Set up something else'),
          ),
        ),
      );
      body.querySelector<HTMLElement>('#setup-done-title')?.focus();
    }

    // ── Steps ──────────────────────────────────────────────────────────────────────

    function renderStep(step: WizardStep): void {
      if (step.type === 'progress') return renderProgress(step);
      const titleId = `setup-title-${++fieldCounter}`;
      const messageId = `${titleId}-message`;
      const errorId = `${titleId}-error`;
      const field = stepField(step, {
        labelledBy: step.message ? `${titleId} ${messageId}` : titleId,
        describedBy: step.error ? errorId : undefined,
      });
      const submit = h('button', { type: 'submit', class: 'primary' }, step.type === 'confirm' ? 'Yes' : 'Continue');
      const no =
        step.type === 'confirm' ? h('button', { type: 'button', onclick: () => send(step, false) }, 'No') : null;
      const form = h(
        'form',
        { class: 'card setup-step', 'data-step': step.id, 'data-type': step.type, novalidate: true },
        h('h2', { id: titleId, tabindex: '-1' }, step.title ?? 'Setup'),
        step.message ? h('p', { id: messageId, class: 'setup-message' }, step.message) : null,
        step.qr ? qrImage(step.qr) : null,
        step.error ? h('p', { id: errorId, class: 'notice error setup-error', role: 'alert' }, step.error) : null,
        field.element,
        h('div', { class: 'form-actions' }, submit, no, cancelButton()),
      );
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        send(step, step.type === 'confirm' ? true : field.value());
      });
      replace(body, form);
      // Land on the place to answer (a re-asked step's error is announced, and describes the field).
      const target =
        form.querySelector<HTMLElement>('input:checked') ??
        form.querySelector<HTMLElement>('input') ??
        (step.initialValue === false ? no : submit);
      target?.focus();
    }

    function send(step: WizardStep, value: Answer | undefined): void {
      const form = body.querySelector('form');
      form?.setAttribute('aria-busy', 'true');
      for (const control of form?.querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input') ?? [])
        control.disabled = true;
      // Cancel stays usable: a live test against a dead server can take a while.
      const cancel = form?.querySelector<HTMLButtonElement>('.setup-cancel');
      if (cancel) cancel.disabled = false;
      const submit = form?.querySelector<HTMLButtonElement>('button[type=submit]');
      if (submit && step.type !== 'note') submit.textContent = 'Checking…';
      follow(advance(step.id, value));
    }

    /** The gateway at work (a live test, a token check, waiting for a scan): acknowledge, and the answer is what follows. */
    function renderProgress(step: WizardStep): void {
      if (step.qr && skipQr) {
        skipQr = false;
        busy('Skipping WhatsApp…');
        return follow(advance(step.id, false));
      }
      const skip = step.qr
        ? h(
            'button',
            {
              type: 'button',
              onclick: () => {
                skipQr = true;
                skip!.disabled = true;
                skip!.textContent = 'Skipping when this code is done…';
              },
            },
            'Skip linking',
          )
        : null;
      replace(
        body,
        h(
          'section',
          { class: 'card setup-step', 'data-step': step.id, 'data-type': 'progress', 'aria-busy': 'true' },
          h('h2', { tabindex: '-1' }, step.title ?? 'Working…'),
          h(
            'p',
            { class: 'setup-busy', role: 'status' },
            h('span', { class: 'setup-spinner', 'aria-hidden': 'true' }),
            h('span', { class: 'setup-message' }, step.message ?? 'One moment…'),
          ),
          step.qr ? qrImage(step.qr) : null,
          h('div', { class: 'form-actions' }, skip, cancelButton()),
        ),
      );
      follow(advance(step.id));
    }

    function cancelButton(): HTMLButtonElement {
      return h(
        'button',
        {
          type: 'button',
          class: 'link setup-cancel',
          onclick: () => {
            cancelRunning();
            showEntries(h('p', { class: 'notice info' }, 'Setup cancelled.'));
          },
        },
        'Cancel setup',
      );
    }

    // ── Start-up ───────────────────────────────────────────────────────────────────

    const reconnect = onReconnect(app, () => {
      if (lost && sessionId) resume(sessionId);
    });
    const section = params.get('section');
    const pending = stored();
    if (pending) resume(pending);
    else if (section && SECTIONS.has(section)) start(section as Section);
    else showEntries();

    return () => {
      left = true;
      reconnect();
      // Leaving the view ends its wizard: the gateway runs one at a time, and a
      // half-answered one would hold that slot (and `claw onboard`) for its idle timeout.
      cancelRunning();
    };
  },
};

// ── Fields ───────────────────────────────────────────────────────────────────────

interface Field {
  element: Child;
  /** The answer to send; undefined acknowledges (a note). */
  value(): Answer | undefined;
}

let fieldCounter = 0;

/** Ids of what names a step's input (its title and question) and describes it (its error). */
interface FieldLabels {
  labelledBy: string;
  describedBy?: string;
}

/** The input for a step. */
function stepField(step: WizardStep, labels: FieldLabels): Field {
  const id = `setup-field-${++fieldCounter}`;
  switch (step.type) {
    case 'note':
    case 'confirm':
    case 'progress':
      return { element: null, value: () => undefined };
    case 'select':
      return choiceField(step, id, labels, 'radio');
    case 'multiselect':
      return choiceField(step, id, labels, 'checkbox');
    case 'text':
      return textField(step, id, labels);
  }
}

function choiceField(step: WizardStep, id: string, labels: FieldLabels, kind: 'radio' | 'checkbox'): Field {
  const options = step.options ?? [];
  const initial = new Set(
    Array.isArray(step.initialValue)
      ? step.initialValue.map(String)
      : step.initialValue === undefined
        ? []
        : [String(step.initialValue)],
  );
  // A single choice always has one picked, so Enter takes the default.
  if (kind === 'radio' && !options.some((option) => initial.has(option.value)) && options[0])
    initial.add(options[0].value);
  const inputs = options.map((option, index) =>
    h('input', {
      type: kind,
      name: id,
      id: `${id}-${index}`,
      value: option.value,
      checked: initial.has(option.value),
    }),
  );
  const element = h(
    'fieldset',
    { class: 'setup-choices', 'aria-labelledby': labels.labelledBy, 'aria-describedby': labels.describedBy },
    options.map((option, index) =>
      h(
        'label',
        { class: 'setup-choice', for: `${id}-${index}` },
        inputs[index],
        h(
          'span',
          null,
          h('span', { class: 'setup-choice-label' }, option.label),
          option.hint ? h('span', { class: 'muted small' }, option.hint) : null,
        ),
      ),
    ),
    kind === 'checkbox' ? h('p', { class: 'muted small' }, 'Choose any number, or none.') : null,
  );
  return {
    element,
    value() {
      const picked = inputs.filter((input) => input.checked).map((input) => input.value);
      return kind === 'checkbox' ? picked : (picked[0] ?? '');
    },
  };
}

function textField(step: WizardStep, id: string, labels: FieldLabels): Field {
  const initial = typeof step.initialValue === 'string' ? step.initialValue : '';
  const input = h('input', {
    type: step.sensitive ? 'password' : 'text',
    id,
    name: step.id,
    'aria-labelledby': labels.labelledBy,
    'aria-describedby': labels.describedBy,
    'aria-invalid': labels.describedBy ? 'true' : undefined,
    // A secret's current value comes back masked (sk-…abcd): a hint at most, never the answer.
    value: step.sensitive ? '' : initial,
    placeholder: step.placeholder ?? (step.sensitive && initial ? `now ${initial}` : undefined),
    autocomplete: step.sensitive ? 'off' : undefined,
    spellcheck: step.sensitive ? 'false' : undefined,
    autocapitalize: 'off',
  });
  if (!step.sensitive) return { element: h('div', { class: 'setup-text' }, input), value: () => input.value };
  const toggle = h('button', { type: 'button', class: 'setup-reveal', 'aria-controls': id }, 'Show');
  toggle.addEventListener('click', () => {
    const reveal = input.type === 'password';
    input.type = reveal ? 'text' : 'password';
    toggle.textContent = reveal ? 'Hide' : 'Show';
    input.focus();
  });
  return { element: h('div', { class: 'setup-text' }, input, toggle), value: () => input.value };
}

/** The raw QR payload drawn here, by a module loaded only when a QR is shown. */
function qrImage(payload: string): HTMLElement {
  const box = h(
    'figure',
    { class: 'setup-qr', 'aria-busy': 'true' },
    h('figcaption', { class: 'muted small' }, 'Drawing the QR code…'),
  );
  import('../qr.js')
    .then(({ qrDataUrl }) => qrDataUrl(payload))
    .then((src) => replace(box, h('img', { src, alt: 'QR code to scan with the phone', width: '320', height: '320' })))
    .catch((error: unknown) =>
      replace(box, h('figcaption', { class: 'error-text' }, `Could not draw the QR code: ${errorMessage(error)}`)),
    )
    .finally(() => box.removeAttribute('aria-busy'));
  return box;
}
