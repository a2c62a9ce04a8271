/**
 * Usage: what the agents' model calls cost and how many tokens they used, today or over the
 * last 7, 30 or 90 days, counted in this browser's calendar days. Totals and the chart per day
 * come from `usage.cost`; the tables by model and by session from `sessions.usage` (the two
 * reads OpenClaw's Control UI makes). A call the gateway could not price (no price known for
 * its model) counts in `missingCostEntries`: the page says how many, rather than showing
 * those calls as free. The chart (uPlot) loads on demand, as its own chunk.
 */
import { onReconnect, type View } from '../app.js';
import { dataTable, errorBox, formatAgo, h, loadingBox, pageHeader, replace, type Child } from '../dom.js';
import type { UsageChart } from '../usage-chart.js';

interface Totals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  totalCost: number;
  inputCost?: number;
  outputCost?: number;
  cacheReadCost?: number;
  cacheWriteCost?: number;
  missingCostEntries: number;
}

interface CostAnswer {
  days: number;
  daily: Array<Totals & { date: string }>;
  totals: Totals;
}

interface SessionRow {
  key: string;
  label?: string;
  agentId: string;
  channel?: string;
  model?: string;
  modelProvider?: string;
  updatedAt: number;
  usage: Totals & { messageCounts: { total: number; toolCalls: number } };
}

interface ModelRow {
  provider?: string;
  model?: string;
  count: number;
  totals: Totals;
}

interface UsageAnswer {
  startDate: string;
  endDate: string;
  sessions: SessionRow[];
  totals: Totals;
  aggregates: {
    sessionCount: number;
    messages: { total: number; toolCalls: number; errors: number };
    byModel: ModelRow[];
  };
}

type Range = 'today' | '7d' | '30d' | '90d';
const RANGES: Array<[Range, string, number]> = [
  ['today', 'Today', 1],
  ['7d', '7 days', 7],
  ['30d', '30 days', 30],
  ['90d', '90 days', 90],
];

const count = (value: number) => value.toLocaleString();

/** Dollars: cents once there are dollars, else down to a hundredth of a cent. */
function formatCost(usd: number): string {
  if (usd > 0 && usd < 0.0001) return '< $0.0001';
  if (usd >= 1) return `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  return `$${usd.toFixed(4).replace(/0{1,2}$/, '')}`;
}

function localDay(date: Date): string {
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

/** `UTC+5:30` from Date's offset (minutes behind UTC), the form the gateway reads. */
function utcOffset(minutesBehind: number): string {
  const ahead = -minutesBehind;
  const hours = Math.floor(Math.abs(ahead) / 60);
  const minutes = Math.abs(ahead) % 60;
  return `UTC${ahead < 0 ? '-' : '+'}${hours}${minutes ? `:${String(minutes).padStart(2, '0')}` : ''}`;
}

/** The last `days` calendar days here, today included, with the time zone that defines them. */
function period(days: number): Record<string, string> {
  const now = new Date();
  const first = new Date(now.getFullYear(), now.getMonth(), now.getDate() - (days - 1));
  return {
    startDate: localDay(first),
    endDate: localDay(now),
    mode: 'specific',
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    utcOffset: utcOffset(now.getTimezoneOffset()),
  };
}

/**
 * A cost, its exact value kept in the title and `data-cost`; calls without a price are said so
 * (beside it in a table; the totals say it in their note instead).
 */
function cost(totals: Totals, noteUnpriced = true): HTMLElement {
  const unpriced = totals.missingCostEntries;
  const text = totals.totalCost === 0 && unpriced > 0 ? 'Not priced' : formatCost(totals.totalCost);
  return h(
    'span',
    { class: 'usage-cost', 'data-cost': String(totals.totalCost), title: `$${totals.totalCost}` },
    text,
    noteUnpriced && unpriced > 0 && totals.totalCost > 0
      ? h('span', { class: 'muted small' }, ` + ${count(unpriced)} unpriced call${unpriced === 1 ? '' : 's'}`)
      : null,
  );
}

function stat(label: string, field: string, value: Child, note?: string): HTMLElement {
  return h(
    'div',
    { class: 'stat' },
    h('span', { class: 'muted small' }, label),
    h('strong', { 'data-total': field }, value),
    note ? h('span', { class: 'muted small' }, note) : null,
  );
}

/** Where the total cost came from: input, output and cache, as priced. */
function costSplit(totals: Totals): string | undefined {
  const parts = (
    [
      ['input', totals.inputCost],
      ['output', totals.outputCost],
      ['cache read', totals.cacheReadCost],
      ['cache write', totals.cacheWriteCost],
    ] as const
  ).filter(([, usd]) => usd);
  const split = parts.map(([name, usd]) => `${formatCost(usd!)} ${name}`).join(' · ');
  const unpriced = totals.missingCostEntries
    ? `${count(totals.missingCostEntries)} call${totals.missingCostEntries === 1 ? '' : 's'} without a price`
    : '';
  return [split, unpriced].filter(Boolean).join('; ') || undefined;
}

export const usageView: View = {
  title: 'Usage',
  mount(root, app) {
    const { gw } = app;
    let range: Range = '30d';
    let chart: UsageChart | undefined;
    let latest = 0;
    let left = false;
    const buttons = RANGES.map(([value, label]) =>
      h(
        'button',
        {
          type: 'button',
          'aria-pressed': String(value === range),
          'data-range': value,
          onclick: () => {
            range = value;
            for (const button of buttons) button.setAttribute('aria-pressed', String(button.dataset.range === value));
            void load();
          },
        },
        label,
      ),
    );
    const body = h('div', { class: 'stack', 'aria-busy': 'true' }, loadingBox());
    replace(
      root,
      h(
        'div',
        { class: 'page' },
        pageHeader('Usage', h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
        h('div', { class: 'segmented', role: 'group', 'aria-label': 'Period' }, buttons),
        body,
      ),
    );

    function chartFigure(daily: CostAnswer['daily']): HTMLElement {
      const active = daily.filter((day) => day.totalTokens || day.totalCost);
      if (!active.length) return h('p', { class: 'empty' }, 'No model calls in this period.');
      const plot = h('div', { class: 'usage-plot', 'aria-hidden': 'true', 'aria-busy': 'true' });
      const peak = active.reduce((top, day) => (day.totalCost > top.totalCost ? day : top), active[0]!);
      import('../usage-chart.js')
        .then(({ drawUsageChart }) => {
          if (left || !plot.isConnected) return;
          chart?.destroy();
          chart = drawUsageChart(
            plot,
            daily.map((day) => ({ date: day.date, tokens: day.totalTokens, cost: day.totalCost })),
            { cost: formatCost, tokens: count },
          );
          plot.removeAttribute('aria-busy');
        })
        .catch((error: unknown) => {
          plot.removeAttribute('aria-busy');
          replace(plot, errorBox(error));
        });
      return h(
        'figure',
        { class: 'usage-chart' },
        plot,
        h(
          'figcaption',
          { class: 'muted small' },
          `Cost (bars) and tokens (line) per day. ${active.length} active day${active.length === 1 ? '' : 's'}` +
            (peak.totalCost > 0 ? `; the most expensive, ${peak.date}, cost ${formatCost(peak.totalCost)}.` : '.'),
        ),
      );
    }

    function render(costs: CostAnswer, usage: UsageAnswer): void {
      const { totals } = costs;
      chart?.destroy();
      chart = undefined;
      const active = costs.daily.filter((day) => day.totalTokens || day.totalCost || day.missingCostEntries);
      replace(
        body,
        h('p', { class: 'muted small' }, `${usage.startDate} to ${usage.endDate}`),
        h(
          'div',
          { class: 'stats' },
          stat('Cost', 'cost', cost(totals, false), costSplit(totals)),
          stat('Tokens', 'totalTokens', count(totals.totalTokens)),
          stat('Input', 'input', count(totals.input)),
          stat('Output', 'output', count(totals.output)),
          stat('Cache read', 'cacheRead', count(totals.cacheRead)),
          stat('Cache write', 'cacheWrite', count(totals.cacheWrite)),
          stat('Sessions', 'sessions', count(usage.aggregates.sessionCount)),
          stat('Messages', 'messages', count(usage.aggregates.messages.total)),
        ),
        h('h2', { class: 'section-title' }, 'Per day'),
        chartFigure(costs.daily),
        active.length
          ? h(
              'div',
              { class: 'table-wrap' },
              dataTable({
                caption: 'Usage per day',
                rows: active,
                rowProps: (day) => ({ class: 'usage-day', 'data-date': day.date }),
                columns: [
                  { label: 'Day', cell: (day) => day.date },
                  { label: 'Tokens', class: 'num', cell: (day) => count(day.totalTokens) },
                  { label: 'In / out', class: 'num', cell: (day) => `${count(day.input)} / ${count(day.output)}` },
                  { label: 'Cost', class: 'num', cell: (day) => cost(day) },
                ],
              }),
            )
          : null,
        h('h2', { class: 'section-title' }, 'By model'),
        usage.aggregates.byModel.length
          ? h(
              'div',
              { class: 'table-wrap' },
              dataTable({
                caption: 'Usage by model',
                rows: usage.aggregates.byModel,
                rowProps: (row) => ({ class: 'usage-model', 'data-model': `${row.provider ?? ''}/${row.model ?? ''}` }),
                columns: [
                  { label: 'Model', cell: (row) => `${row.provider ?? 'unknown'}/${row.model ?? 'unknown'}` },
                  { label: 'Calls', class: 'num', cell: (row) => count(row.count) },
                  { label: 'Tokens', class: 'num', cell: (row) => count(row.totals.totalTokens) },
                  {
                    label: 'In / out / cache',
                    class: 'num',
                    cell: (row) =>
                      `${count(row.totals.input)} / ${count(row.totals.output)} / ${count(row.totals.cacheRead + row.totals.cacheWrite)}`,
                  },
                  { label: 'Cost', class: 'num', cell: (row) => cost(row.totals) },
                ],
              }),
            )
          : h('p', { class: 'empty' }, 'No model calls in this period.'),
        h('h2', { class: 'section-title' }, 'By session'),
        usage.sessions.length
          ? h(
              'div',
              { class: 'table-wrap' },
              dataTable({
                caption: 'Usage by session',
                rows: usage.sessions,
                rowProps: (row) => ({ class: 'usage-session', 'data-session': row.key }),
                columns: [
                  {
                    label: 'Session',
                    cell: (row) => [
                      row.label ? h('strong', null, row.label) : null,
                      h('a', { class: 'key', href: `#/chat?session=${encodeURIComponent(row.key)}` }, row.key),
                      h(
                        'p',
                        { class: 'muted small' },
                        [
                          row.model ? `${row.modelProvider ?? ''}/${row.model}` : '',
                          row.channel,
                          formatAgo(row.updatedAt),
                        ]
                          .filter(Boolean)
                          .join(' · '),
                      ),
                    ],
                  },
                  { label: 'Messages', class: 'num', cell: (row) => count(row.usage.messageCounts.total) },
                  {
                    label: 'Tokens',
                    class: 'num',
                    cell: (row) =>
                      h('span', { 'data-tokens': String(row.usage.totalTokens) }, count(row.usage.totalTokens)),
                  },
                  { label: 'Cost', class: 'num', cell: (row) => cost(row.usage) },
                ],
              }),
            )
          : h('p', { class: 'empty' }, 'No session used any tokens in this period.'),
      );
    }

    async function load(): Promise<void> {
      const ticket = ++latest;
      body.setAttribute('aria-busy', 'true');
      const days = RANGES.find(([value]) => value === range)![2];
      const params = { ...period(days), agentScope: 'all' };
      try {
        const [costs, usage] = await Promise.all([
          gw.call<CostAnswer>('usage.cost', params),
          gw.call<UsageAnswer>('sessions.usage', { ...params, limit: 1000 }),
        ]);
        // A slower answer for a period no longer selected is dropped.
        if (ticket === latest) render(costs, usage);
      } catch (error) {
        if (ticket === latest)
          replace(
            body,
            errorBox(error, () => void load()),
          );
      } finally {
        if (ticket === latest) body.removeAttribute('aria-busy');
      }
    }

    const stopWatching = onReconnect(app, () => void load());
    void load();
    return () => {
      left = true;
      chart?.destroy();
      stopWatching();
    };
  },
};
