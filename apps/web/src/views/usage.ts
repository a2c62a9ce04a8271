/**
 * Usage: tokens (and cost, where a provider priced it) over a period, per day as a bar chart
 * and per session, from `sessions.usage` across every agent. claw keeps no model prices, so
 * the cost line says how many calls were not priced rather than showing a made-up zero.
 */
import { onReconnect, type View } from '../app.js';
import { errorBox, formatAgo, h, loadingBox, pageHeader, replace } from '../dom.js';

interface Totals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  totalCost: number;
  missingCostEntries: number;
}

interface SessionUsage {
  key: string;
  label?: string;
  agentId: string;
  channel?: string;
  model?: string;
  modelProvider?: string;
  updatedAt: number;
  usage: Totals & { messageCounts: { total: number; toolCalls: number } };
}

interface UsageAnswer {
  startDate: string;
  endDate: string;
  sessions: SessionUsage[];
  totals: Totals;
  aggregates: {
    sessionCount: number;
    messages: { total: number; toolCalls: number; errors: number };
    daily: Array<{ date: string; tokens: number; cost: number; messages: number }>;
  };
}

type Range = '7d' | '30d' | '90d' | 'all';
const RANGES: Array<[Range, string]> = [
  ['7d', '7 days'],
  ['30d', '30 days'],
  ['90d', '90 days'],
  ['all', 'All time'],
];
const SVG = 'http://www.w3.org/2000/svg';
const count = (value: number) => value.toLocaleString();

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number>,
  ...children: Array<SVGElement | string>
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}

/** Every day from `start` to `end` (YYYY-MM-DD), for a chart that shows the quiet days too. */
function daysBetween(start: string, end: string): string[] {
  const days: string[] = [];
  for (let at = Date.parse(`${start}T00:00:00Z`); days.length < 400; at += 86_400_000) {
    const day = new Date(at).toISOString().slice(0, 10);
    if (day > end) break;
    days.push(day);
  }
  return days;
}

/** Tokens per day as bars: every day of a bounded period, only the active ones for all time. */
function dailyChart(answer: UsageAnswer, range: Range): Element {
  const daily = answer.aggregates.daily;
  if (!daily.length) return h('p', { class: 'empty' }, 'No activity in this period.');
  const byDate = new Map(daily.map((day) => [day.date, day]));
  const days = (range === 'all' ? daily.map((day) => day.date) : daysBetween(answer.startDate, answer.endDate)).map(
    (date) => byDate.get(date) ?? { date, tokens: 0, cost: 0, messages: 0 },
  );
  const width = 640;
  const height = 160;
  const gap = days.length > 60 ? 1 : 4;
  const max = Math.max(...days.map((day) => day.tokens), 1);
  const bar = Math.max(1, Math.min(48, (width - gap * days.length) / days.length));
  const summary = daily.map((day) => `${day.date}: ${count(day.tokens)} tokens`).join('; ');
  return h(
    'figure',
    { class: 'usage-chart' },
    svg(
      'svg',
      {
        viewBox: `0 0 ${width} ${height + 18}`,
        preserveAspectRatio: 'xMinYMax meet',
        role: 'img',
        'aria-label': `Tokens per day. ${summary}`,
      },
      ...days.map((day, index) => {
        const tall = day.tokens ? Math.max(1, Math.round((day.tokens / max) * height)) : 0;
        const x = index * (bar + gap);
        return svg(
          'g',
          { class: 'usage-bar', 'data-date': day.date, 'data-tokens': day.tokens },
          svg(
            'rect',
            { x, y: height - tall, width: bar, height: tall, rx: Math.min(2, bar / 2) },
            svg('title', {}, `${day.date}: ${count(day.tokens)} tokens, ${day.messages} messages`),
          ),
          ...(days.length <= 14 || index === 0 || index === days.length - 1
            ? [
                svg(
                  'text',
                  {
                    x: index === 0 && days.length > 14 ? x : x + bar / 2,
                    y: height + 14,
                    'text-anchor':
                      index === 0 && days.length > 14
                        ? 'start'
                        : index === days.length - 1 && days.length > 14
                          ? 'end'
                          : 'middle',
                  },
                  day.date.slice(5),
                ),
              ]
            : []),
        );
      }),
    ),
    h('figcaption', { class: 'muted small' }, `Peak ${count(max)} tokens in a day.`),
  );
}

export const usageView: View = {
  title: 'Usage',
  mount(root, app) {
    const { gw } = app;
    let range: Range = '30d';
    const buttons = RANGES.map(([value, label]) =>
      h(
        'button',
        {
          type: 'button',
          'aria-pressed': String(value === range),
          onclick: () => {
            range = value;
            for (const button of buttons) button.setAttribute('aria-pressed', String(button.dataset.range === value));
            void load();
          },
          'data-range': value,
        },
        label,
      ),
    );
    const body = h('div', { 'aria-busy': 'true' }, loadingBox());
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

    function stat(label: string, field: string, value: string, note?: string): HTMLElement {
      return h(
        'div',
        { class: 'stat' },
        h('span', { class: 'muted small' }, label),
        h('strong', { 'data-total': field }, value),
        note ? h('span', { class: 'muted small' }, note) : null,
      );
    }

    function render(answer: UsageAnswer, shownRange: Range): void {
      const { totals, aggregates } = answer;
      const cost =
        totals.totalCost > 0
          ? `$${totals.totalCost.toFixed(2)}`
          : totals.missingCostEntries > 0
            ? `not priced`
            : '$0.00';
      const top = Math.max(...answer.sessions.map((row) => row.usage.totalTokens), 1);
      replace(
        body,
        h('p', { class: 'muted small' }, `${answer.startDate} to ${answer.endDate}`),
        h(
          'div',
          { class: 'stats' },
          stat('Tokens', 'totalTokens', count(totals.totalTokens)),
          stat('Input', 'input', count(totals.input)),
          stat('Output', 'output', count(totals.output)),
          stat('Cache read', 'cacheRead', count(totals.cacheRead)),
          stat('Sessions', 'sessions', count(aggregates.sessionCount)),
          stat('Messages', 'messages', count(aggregates.messages.total)),
          stat('Tool calls', 'toolCalls', count(aggregates.messages.toolCalls)),
          stat(
            'Cost',
            'cost',
            cost,
            totals.missingCostEntries > 0 ? `${totals.missingCostEntries} calls without a price` : undefined,
          ),
        ),
        h('h2', { class: 'section-title' }, 'Per day'),
        dailyChart(answer, shownRange),
        h('h2', { class: 'section-title' }, 'Per session'),
        answer.sessions.length
          ? h(
              'ul',
              { class: 'plain-list usage-sessions', 'aria-label': 'Usage per session' },
              answer.sessions.map((row) => {
                const meter = h('span', { class: 'meter-fill' });
                // Set through the CSSOM: the page's CSP refuses style attributes.
                meter.style.width = `${Math.max(1, (row.usage.totalTokens / top) * 100)}%`;
                return h(
                  'li',
                  { class: 'usage-session', 'data-session': row.key },
                  h(
                    'div',
                    { class: 'usage-name' },
                    row.label ? h('strong', null, row.label) : null,
                    h('a', { class: 'key', href: `#/chat?session=${encodeURIComponent(row.key)}` }, row.key),
                    h(
                      'span',
                      { class: 'muted small' },
                      [
                        row.model ? `${row.modelProvider ?? ''}/${row.model}` : '',
                        row.channel,
                        formatAgo(row.updatedAt),
                      ]
                        .filter(Boolean)
                        .join(' · '),
                    ),
                  ),
                  h('span', { class: 'meter', 'aria-hidden': 'true' }, meter),
                  h(
                    'span',
                    { class: 'usage-numbers' },
                    h(
                      'strong',
                      { 'data-tokens': String(row.usage.totalTokens) },
                      `${count(row.usage.totalTokens)} tokens`,
                    ),
                    h(
                      'span',
                      { class: 'muted small' },
                      `${count(row.usage.input)} in · ${count(row.usage.output)} out · ${row.usage.messageCounts.total} messages`,
                    ),
                  ),
                );
              }),
            )
          : h('p', { class: 'empty' }, 'No session used any tokens in this period.'),
      );
    }

    async function load(): Promise<void> {
      body.setAttribute('aria-busy', 'true');
      try {
        const asked = range;
        render(await gw.call<UsageAnswer>('sessions.usage', { agentScope: 'all', range: asked }), asked);
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
