/**
 * web-fetch: web_fetch of a local 1 MB HTML article through the tool choke point (SSRF check,
 * GET, Readability on linkedom, Markdown), cache off so every call does the whole job. The
 * first call also loads linkedom and Readability; RSS is measured around the warm calls and
 * from before the first.
 */
import { bundledPluginDir, createTestKernel } from '../../sdk/testing.js';
import { startWebServer } from '../web-helpers.js';

type Line = (name: string, value: string, target: string, ok: boolean) => void;

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export async function webFetchBench(line: Line, quick: boolean): Promise<void> {
  const web = await startWebServer();
  const kernel = await createTestKernel({
    plugins: [bundledPluginDir('web-fetch')],
    config: {
      tools: {
        web: {
          fetch: { cacheTtlMinutes: 0, maxResponseBytes: 2_000_000, ssrfPolicy: { allowedHostnames: ['127.0.0.1'] } },
        },
      },
    },
  });
  try {
    const url = `${web.origin}/big-page?kb=1024`;
    const run = async () => {
      const started = performance.now();
      const result = await kernel.runTool('web_fetch', { url });
      if (result.isError) throw new Error(`web_fetch failed: ${JSON.stringify(result.content)}`);
      return { ms: performance.now() - started, details: result.details as { rawLength: number; extractor: string } };
    };
    global.gc?.();
    const rssStart = process.memoryUsage().rss;
    const cold = await run();
    const rssWarm = process.memoryUsage().rss;
    const times: number[] = [];
    let peak = rssWarm;
    for (let i = 0; i < (quick ? 5 : 20); i++) {
      times.push((await run()).ms);
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    line(
      `web_fetch 1 MB page (${cold.details.extractor}, ${cold.details.rawLength} chars), first call`,
      `${cold.ms.toFixed(0)} ms`,
      '(info)',
      true,
    );
    line(
      `  p50 / p95 over ${times.length} calls`,
      `${percentile(times, 0.5).toFixed(0)} / ${percentile(times, 0.95).toFixed(0)} ms`,
      '(info)',
      true,
    );
    line(
      '  RSS added: first call / peak during the runs',
      `${mb(rssWarm - rssStart)} / ${mb(peak - rssStart)}`,
      '(info)',
      true,
    );
  } finally {
    await kernel.dispose();
    await web.close();
  }
}
