/**
 * Automations: the gateway's cron jobs (`cron.list`, disabled ones too), a form to add one
 * (`cron.add`: a message for an agent on a cron expression, an interval or once at a time),
 * and per job Run now (`cron.run`), Enable/Disable (`cron.update`) and Remove (`cron.remove`).
 * The recent runs of every job come from `cron.runs`; the `cron` event keeps both lists fresh.
 */
import { onReconnect, type View } from '../app.js';
import {
  badge,
  errorBox,
  errorMessage,
  formatAgo,
  formatDuration,
  formatTime,
  h,
  loadingBox,
  pageHeader,
  replace,
} from '../dom.js';

type Schedule =
  { kind: 'at'; at: string } | { kind: 'every'; everyMs: number } | { kind: 'cron'; expr: string; tz?: string };

interface Job {
  id: string;
  name: string;
  agentId?: string;
  enabled: boolean;
  schedule: Schedule;
  payload: { kind: string; message?: string; text?: string; command?: string };
  state: {
    nextRunAtMs?: number;
    runningAtMs?: number;
    lastRunAtMs?: number;
    lastRunStatus?: 'ok' | 'error' | 'skipped';
    lastError?: string;
  };
}

interface Run {
  ts: number;
  jobId: string;
  runId: string;
  status: 'ok' | 'error' | 'skipped';
  trigger: string;
  error?: string;
  summary?: string;
  durationMs?: number;
}

const STATUS_TONE = { ok: 'ok', error: 'bad', skipped: 'warn' } as const;

/** An interval in its largest whole unit (6 h, 90 min), else as a duration. */
function formatInterval(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1000],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  return formatDuration(ms);
}

function describeSchedule(schedule: Schedule): string {
  if (schedule.kind === 'cron') return `cron ${schedule.expr}${schedule.tz ? ` (${schedule.tz})` : ''}`;
  if (schedule.kind === 'every') return `every ${formatInterval(schedule.everyMs)}`;
  return `once at ${formatTime(Date.parse(schedule.at))}`;
}

export const cronView: View = {
  title: 'Automations',
  mount(root, app) {
    const { gw } = app;
    const admin = gw.can('operator.admin');
    let jobs: Job[] = [];
    const status = h('div');
    const list = h('div', { class: 'stack', 'aria-busy': 'true' }, loadingBox());
    const runs = h('div', { 'aria-busy': 'true' });
    const agentSelect = h('select', { id: 'cron-agent' });
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('Automations', h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
        h(
          'p',
          { class: 'muted' },
          'Scheduled messages to an agent: each run is a fresh conversation, and the reply is posted where you last chatted.',
        ),
        status,
        admin ? addForm() : h('p', { class: 'muted' }, 'Adding and changing jobs needs the operator.admin scope.'),
        h('h2', { class: 'section-title' }, 'Jobs'),
        list,
        h('h2', { class: 'section-title' }, 'Recent runs'),
        runs,
      ),
    );

    function addForm(): HTMLElement {
      const name = h('input', { type: 'text', id: 'cron-name', autocomplete: 'off', placeholder: 'Morning summary' });
      const kind = h(
        'select',
        { id: 'cron-kind' },
        h('option', { value: 'cron' }, 'Cron expression'),
        h('option', { value: 'every' }, 'Every interval'),
        h('option', { value: 'at' }, 'Once'),
      );
      const when = h('input', {
        type: 'text',
        id: 'cron-when',
        required: true,
        autocomplete: 'off',
        spellcheck: 'false',
        'aria-describedby': 'cron-when-help',
      });
      const whenHelp = h('p', { class: 'muted small', id: 'cron-when-help' });
      const tz = h('input', {
        type: 'text',
        id: 'cron-tz',
        autocomplete: 'off',
        value: Intl.DateTimeFormat().resolvedOptions().timeZone ?? '',
      });
      const tzRow = h('div', { class: 'field' }, h('label', { for: 'cron-tz' }, 'Time zone'), tz);
      const message = h('textarea', { id: 'cron-message', rows: '3', required: true });
      const announce = h('input', { type: 'checkbox', id: 'cron-announce', checked: true });
      const submit = h('button', { type: 'submit', class: 'primary' }, 'Add job');
      const problem = h('div', { role: 'alert' });
      const hints: Record<string, [placeholder: string, help: string]> = {
        cron: ['0 8 * * 1-5', 'Minute, hour, day of month, month, day of week: 0 8 * * 1-5 is 08:00 on weekdays.'],
        every: ['30m', 'A duration such as 90s, 30m, 6h or 1d.'],
        at: ['20m', 'A duration from now (20m, 2h) or a local date and time such as 2030-01-31T09:00.'],
      };
      const showKind = () => {
        const [placeholder, help] = hints[kind.value]!;
        when.placeholder = placeholder;
        whenHelp.textContent = help;
        tzRow.hidden = kind.value !== 'cron';
      };
      kind.addEventListener('change', showKind);
      showKind();

      const schedule = (): Schedule | Record<string, unknown> => {
        const text = when.value.trim();
        if (kind.value === 'cron')
          return { kind: 'cron', expr: text, ...(tz.value.trim() ? { tz: tz.value.trim() } : {}) };
        if (kind.value === 'every') return { kind: 'every', everyMs: text };
        // A date and time without a zone means this browser's local time.
        const local = /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d)?)?$/.test(text) ? new Date(text).toISOString() : text;
        return { kind: 'at', at: local };
      };

      const add = async (event: Event) => {
        event.preventDefault();
        submit.disabled = true;
        replace(problem);
        try {
          const job = await gw.act<Job>('cron.add', {
            ...(name.value.trim() ? { name: name.value.trim() } : {}),
            schedule: schedule(),
            sessionTarget: 'isolated',
            payload: { kind: 'agentTurn', message: message.value },
            delivery: announce.checked ? { mode: 'announce', channel: 'last' } : { mode: 'none' },
            ...(agentSelect.value ? { agentId: agentSelect.value } : {}),
          });
          app.toast(`Added “${job.name}”: ${describeSchedule(job.schedule)}.`);
          name.value = when.value = message.value = '';
          await load();
        } catch (error) {
          replace(problem, errorBox(`Not added: ${errorMessage(error)}`));
        } finally {
          submit.disabled = false;
        }
      };

      return h(
        'details',
        { class: 'card add-job' },
        h('summary', null, h('strong', null, 'Add a job')),
        h(
          'form',
          { class: 'field-grid', onsubmit: add },
          h('div', { class: 'field' }, h('label', { for: 'cron-name' }, 'Name'), name),
          h('div', { class: 'field' }, h('label', { for: 'cron-kind' }, 'Schedule'), kind),
          h('div', { class: 'field' }, h('label', { for: 'cron-when' }, 'When'), when, whenHelp),
          tzRow,
          h('div', { class: 'field wide' }, h('label', { for: 'cron-message' }, 'Message to the agent'), message),
          h('div', { class: 'field' }, h('label', { for: 'cron-agent' }, 'Agent'), agentSelect),
          h('div', { class: 'field' }, h('label', { class: 'check' }, announce, 'Post the reply where I last chatted')),
          problem,
          h('div', { class: 'form-actions wide' }, submit),
        ),
      );
    }

    function renderJobs(): void {
      list.removeAttribute('aria-busy');
      if (!jobs.length) return replace(list, h('p', { class: 'empty' }, 'No jobs yet.'));
      replace(list, jobs.map(card));
    }

    function card(job: Job): HTMLElement {
      const last = job.state.lastRunStatus;
      const what = job.payload.message ?? job.payload.text ?? job.payload.command ?? '';
      const act = async (work: () => Promise<unknown>, done: string) => {
        try {
          await work();
          app.toast(done);
          await load();
        } catch (error) {
          app.toast(errorMessage(error), 'error');
        }
      };
      return h(
        'article',
        { class: 'card job', 'data-job': job.id, 'aria-label': job.name },
        h(
          'header',
          { class: 'job-head' },
          h('h3', null, job.name),
          job.enabled ? badge('On', 'ok') : badge('Off', 'muted'),
          job.state.runningAtMs ? badge('Running', 'info') : null,
        ),
        h('p', { class: 'job-message' }, what),
        h(
          'dl',
          null,
          h('dt', null, 'Schedule'),
          h('dd', null, describeSchedule(job.schedule)),
          h('dt', null, 'Agent'),
          h('dd', null, job.agentId ?? 'default'),
          h('dt', null, 'Next run'),
          h('dd', null, job.enabled && job.state.nextRunAtMs ? formatTime(job.state.nextRunAtMs) : '—'),
          h('dt', null, 'Last run'),
          h(
            'dd',
            null,
            last ? [badge(last, STATUS_TONE[last]), ` ${formatAgo(job.state.lastRunAtMs)}`] : 'never',
            job.state.lastError ? h('div', { class: 'error-text small' }, job.state.lastError) : null,
          ),
        ),
        admin
          ? h(
              'div',
              { class: 'row-actions' },
              h(
                'button',
                {
                  type: 'button',
                  'aria-label': `Run ${job.name} now`,
                  onclick: () =>
                    void act(async () => {
                      const result = await gw.act<{ ran: boolean; reason?: string }>('cron.run', { jobId: job.id });
                      if (!result.ran)
                        throw new Error(`${job.name} did not run (${result.reason ?? 'no reason given'})`);
                    }, `Started ${job.name}.`),
                },
                'Run now',
              ),
              h(
                'button',
                {
                  type: 'button',
                  'aria-label': `${job.enabled ? 'Disable' : 'Enable'} ${job.name}`,
                  onclick: () =>
                    void act(
                      () => gw.act('cron.update', { jobId: job.id, patch: { enabled: !job.enabled } }),
                      `${job.name} is ${job.enabled ? 'off' : 'on'}.`,
                    ),
                },
                job.enabled ? 'Disable' : 'Enable',
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'danger',
                  'aria-label': `Remove ${job.name}`,
                  onclick: () => {
                    if (window.confirm(`Remove the job “${job.name}”? Its run history is kept.`))
                      void act(() => gw.act('cron.remove', { jobId: job.id }), `Removed ${job.name}.`);
                  },
                },
                'Remove',
              ),
            )
          : null,
      );
    }

    function renderRuns(entries: Run[]): void {
      runs.removeAttribute('aria-busy');
      if (!entries.length) return replace(runs, h('p', { class: 'empty' }, 'No runs yet.'));
      const names = new Map(jobs.map((job) => [job.id, job.name]));
      replace(
        runs,
        h(
          'ul',
          { class: 'plain-list runs', 'aria-label': 'Recent runs' },
          entries.map((run) =>
            h(
              'li',
              { class: 'run', 'data-run': run.runId, 'data-job': run.jobId },
              badge(run.status, STATUS_TONE[run.status]),
              h('strong', null, names.get(run.jobId) ?? run.jobId),
              h(
                'span',
                { class: 'muted small' },
                `${formatTime(run.ts)} · ${run.trigger}${run.durationMs !== undefined ? ` · ${formatDuration(run.durationMs)}` : ''}`,
              ),
              run.summary || run.error
                ? h('p', { class: run.error ? 'error-text small' : 'small' }, run.error ?? run.summary)
                : null,
            ),
          ),
        ),
      );
    }

    async function loadAgents(): Promise<void> {
      try {
        const result = await gw.call<{ defaultId: string; agents: Array<{ id: string; name?: string }> }>(
          'agents.list',
          {},
        );
        replace(
          agentSelect,
          result.agents.map((agent) =>
            h(
              'option',
              { value: agent.id, selected: agent.id === result.defaultId },
              `${agent.name ?? agent.id}${agent.id === result.defaultId ? ' (default)' : ''}`,
            ),
          ),
        );
      } catch {
        // Without the list the job runs as the default agent: leave the choice out.
        replace(agentSelect, h('option', { value: '' }, 'Default agent'));
      }
    }

    async function load(): Promise<void> {
      try {
        const [listed, state, history] = await Promise.all([
          gw.call<{ jobs: Job[] }>('cron.list', { enabled: 'all', sortBy: 'name' }),
          gw.call<{ enabled: boolean }>('cron.status', {}),
          gw.call<{ entries: Run[] }>('cron.runs', { scope: 'all', limit: 20 }),
        ]);
        jobs = listed.jobs;
        replace(
          status,
          state.enabled
            ? null
            : h(
                'p',
                { class: 'notice warn' },
                'The scheduler is off (cron.enabled is false): jobs only run with Run now.',
              ),
        );
        renderJobs();
        renderRuns(history.entries);
      } catch (error) {
        list.removeAttribute('aria-busy');
        runs.removeAttribute('aria-busy');
        replace(
          list,
          errorBox(error, () => void load()),
        );
        replace(runs);
      }
    }

    // Job and run changes from anywhere (the schedule, another client, the agent's cron tool).
    let pendingRefresh: number | undefined;
    const stopEvents = gw.on('cron', () => {
      clearTimeout(pendingRefresh);
      pendingRefresh = window.setTimeout(() => void load(), 150);
    });
    const stopWatching = onReconnect(app, () => void load());
    void loadAgents();
    void load();
    return () => {
      clearTimeout(pendingRefresh);
      stopEvents();
      stopWatching();
    };
  },
};
