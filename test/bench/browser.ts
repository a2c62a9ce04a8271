/**
 * The browser plugin with Debian's Chromium: cold start (a fresh profile: playwright-core
 * import, Chromium launch, proxy, first navigation) to the first snapshot, through the
 * tool choke point as the agent calls it; then snapshot time on served pages.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createTestKernel, type TestKernel } from '../../sdk/testing.js';
import { startTestSite } from '../browser-pages.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;

const PLUGIN = fileURLToPath(new URL('../../plugins/browser', import.meta.url));
const COLD_RUNS = 3;
const SNAPSHOT_RUNS = 30;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function tool(kernel: TestKernel, params: Record<string, unknown>): Promise<void> {
  const result = await kernel.runTool('browser', params);
  if (result.isError) throw new Error(`browser ${String(params.action)}: ${JSON.stringify(result.content)}`);
}

export async function browserBench(line: Line): Promise<void> {
  if (!existsSync('/usr/bin/chromium')) return line('browser', 'skipped', 'no /usr/bin/chromium', true);
  const site = await startTestSite();
  const config = { browser: { ssrfPolicy: { allowedHostnames: ['127.0.0.1'] } } };
  try {
    const cold: number[] = [];
    for (let run = 0; run < COLD_RUNS; run++) {
      const kernel = await createTestKernel({ plugins: [PLUGIN], config });
      try {
        await kernel.start();
        const started = performance.now();
        await tool(kernel, { action: 'navigate', url: `${site.base}/page` });
        await tool(kernel, { action: 'snapshot', interactive: true });
        cold.push(performance.now() - started);
      } finally {
        await kernel.dispose();
      }
    }
    line(
      `browser cold start → 1st snapshot (med. ${COLD_RUNS})`,
      `${percentile(cold, 50).toFixed(0)} ms`,
      '(info)',
      true,
    );

    const kernel = await createTestKernel({ plugins: [PLUGIN], config });
    try {
      await kernel.start();
      for (const [page, label] of [
        ['/page', 'form'],
        ['/big', '200 sections'],
      ] as const) {
        await tool(kernel, { action: 'navigate', url: `${site.base}${page}` });
        for (const interactive of [false, true]) {
          const times: number[] = [];
          for (let run = 0; run < SNAPSHOT_RUNS + 3; run++) {
            const started = performance.now();
            await tool(kernel, { action: 'snapshot', interactive });
            if (run >= 3) times.push(performance.now() - started);
          }
          line(
            `browser snapshot p50/p95, ${label}${interactive ? ', interactive' : ''}`,
            `${percentile(times, 50).toFixed(1)} / ${percentile(times, 95).toFixed(1)} ms`,
            '(info)',
            true,
          );
        }
      }
    } finally {
      await kernel.dispose();
    }
  } finally {
    await site.close();
  }
}
