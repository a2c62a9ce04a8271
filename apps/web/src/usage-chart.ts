/**
 * The Usage page's chart: cost (bars, left axis) and tokens (line, right axis) per day, drawn
 * by uPlot on a canvas. Its own module so the build splits uPlot into a chunk that loads only
 * when the Usage page shows a chart.
 */
import uPlot from 'uplot';

export interface ChartDay {
  /** YYYY-MM-DD, a day as the page asked the gateway to count them (the browser's time zone). */
  date: string;
  tokens: number;
  cost: number;
}

export interface UsageChart {
  destroy(): void;
}

const HEIGHT = 220;

/** A calendar day's local midnight, in seconds: uPlot's time axis then labels the right day. */
function dayStart(date: string): number {
  const [year, month, day] = date.split('-').map(Number);
  return new Date(year!, month! - 1, day!).getTime() / 1000;
}

/** The page's colours, so the chart follows the light or dark theme the stylesheet picked. */
function themeColor(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

export function drawUsageChart(
  target: HTMLElement,
  days: ChartDay[],
  format: { cost(usd: number): string; tokens(count: number): string },
): UsageChart {
  const accent = themeColor('--accent', '#b93d0a');
  const info = themeColor('--info', '#0b5cad');
  const muted = themeColor('--muted', '#5d6670');
  const grid = themeColor('--border', '#d9dde2');
  const axis = (scale: string, side: 1 | 3, value: (count: number) => string): uPlot.Axis => ({
    scale,
    side,
    stroke: muted,
    grid: { stroke: grid, width: 1, show: side === 3 },
    ticks: { stroke: grid, width: 1 },
    size: 64,
    values: (_chart, splits) => splits.map(value),
  });
  const first = dayStart(days[0]!.date);
  const last = dayStart(days.at(-1)!.date);
  const options: uPlot.Options = {
    width: Math.max(240, target.clientWidth),
    height: HEIGHT,
    cursor: { drag: { x: false, y: false } },
    scales: {
      // Half a day either side of the first and last day: bars are not cut in half, and one
      // day alone still gets an axis with width.
      x: { time: true, range: () => [first - 43_200, last + 43_200] },
      cost: { range: (_chart, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      tokens: { range: (_chart, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
    },
    series: [
      {
        label: 'Day',
        value: (_chart, seconds) => (seconds == null ? '' : new Date(seconds * 1000).toLocaleDateString()),
      },
      {
        label: 'Cost',
        scale: 'cost',
        stroke: accent,
        // Bars half see-through, so the token line over them stays readable.
        fill: /^#[0-9a-f]{6}$/i.test(accent) ? `${accent}99` : accent,
        width: 1,
        paths: uPlot.paths.bars!({ size: [0.6, 48], align: 0 }),
        points: { show: false },
        value: (_chart, usd) => (usd == null ? '–' : format.cost(usd)),
      },
      {
        label: 'Tokens',
        scale: 'tokens',
        stroke: info,
        width: 2,
        points: { show: true, size: 5, fill: info },
        value: (_chart, count) => (count == null ? '–' : format.tokens(count)),
      },
    ],
    axes: [
      {
        stroke: muted,
        grid: { show: false },
        ticks: { stroke: grid, width: 1 },
        // Whole days only: the data has one point a day, hours between them mean nothing.
        incrs: [1, 2, 7, 14, 30].map((count) => count * 86_400),
        values: (_chart, splits) =>
          splits.map((seconds) =>
            new Date(seconds * 1000).toLocaleDateString(undefined, { month: 'short', day: 'numeric' }),
          ),
      },
      axis('cost', 3, format.cost),
      axis('tokens', 1, format.tokens),
    ],
  };
  const data: uPlot.AlignedData = [
    days.map((day) => dayStart(day.date)),
    days.map((day) => day.cost),
    days.map((day) => day.tokens),
  ];
  const chart = new uPlot(options, data, target);
  // The page reflows (a narrower window, the menu folding): the canvas follows its box.
  const resize = new ResizeObserver(() => {
    const width = Math.max(240, target.clientWidth);
    if (width !== chart.width) chart.setSize({ width, height: HEIGHT });
  });
  resize.observe(target);
  return {
    destroy() {
      resize.disconnect();
      chart.destroy();
    },
  };
}
