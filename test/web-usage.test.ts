/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser and use DOM types.)
/**
 * The Usage page in a real browser (Debian's Chromium driven by playwright-core) against a
 * real gateway whose OpenAI provider talks to the fake LLM server. Two scripted turns with
 * known token counts: one on a model with a configured price, one on a model nobody priced.
 * The page must show the exact cost of the first, say the second is not priced, draw the
 * chart with uPlot (loaded only when the page opens), and agree with what `usage.cost` and
 * `sessions.usage` answer. Screenshots go to test-results/web-usage/.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { client, startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';
import { AGENT_STACK } from '../sdk/testing.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-results', 'web-usage');
const TOKEN = 'usage-page-test-token-0123456789';
const PLUGINS = [...AGENT_STACK, 'openai', 'channel-webchat'].map((id) => join(REPO, 'plugins', id));
// USD per million tokens. The priced turn: 300k prompt tokens of which 100k cached, 50k out →
// 200k × $2 + 100k × $0.50 + 50k × $8 = $0.40 + $0.05 + $0.40 = $0.85.
const PRICE = { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 };
const PRICED = { input: 300_000, cacheRead: 100_000, output: 50_000 };
const UNPRICED = { input: 1_000, output: 100 };
const EXPECTED_COST = 0.85;

interface Totals {
  input: number;
  output: number;
  cacheRead: number;
  totalTokens: number;
  totalCost: number;
  missingCostEntries: number;
}

describe.skipIf(!existsSync(CHROMIUM))('Usage page in Chromium', () => {
  let fake: FakeLlm;
  let gw: RunningGateway;
  let operator: GatewayClient;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const requested: string[] = [];

  const view = () => page.locator('main');
  const digits = (text: string | null) => (text ?? '').replace(/\D/g, '');

  async function turn(sessionKey: string, message: string, usage: Record<string, number>): Promise<void> {
    fake.script({ text: 'Counted.', usage });
    const { runId } = await operator.request<{ runId: string }>('chat.send', {
      idempotencyKey: `usage-${sessionKey}-${message}`,
      sessionKey,
      message,
    });
    await operator.request('agent.wait', { runId, timeoutMs: 20_000 });
  }

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const appDir = join(tempDir('claw-web-usage-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    fake = await startFakeLlm();
    const stateDir = tempDir('claw-web-usage-state-');
    const config = {
      agents: {
        defaults: { model: 'openai/gpt-4.1', workspace: tempDir('claw-web-usage-ws-') },
        list: [
          { id: 'main', default: true },
          { id: 'helper', model: 'openai/claw-test-unpriced' },
        ],
      },
      models: {
        providers: {
          openai: {
            baseUrl: fake.openaiBaseUrl,
            apiKey: 'sk-usage-page-secret',
            models: [{ id: 'gpt-4.1', cost: PRICE }],
          },
        },
      },
      plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } },
    };
    const gateway = { auth: { mode: 'token', token: TOKEN } };
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ ...config, gateway }, null, 2));
    gw = await startGateway({ stateDir, plugins: PLUGINS, config, gateway });
    operator = await client(gw.url, { token: TOKEN });
    await turn('agent:main:main', 'Count my tokens', PRICED);
    await turn('agent:helper:main', 'Count these too', UNPRICED);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/WebSocket/.test(message.text())) pageErrors.push(message.text());
    });
    page.on('request', (request) => requested.push(new URL(request.url()).pathname));
    await page.goto(`http://127.0.0.1:${gw.port}/#token=${TOKEN}`);
    await page.locator('.pill[data-phase="open"]').waitFor({ timeout: 60_000 });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await operator?.close();
    await gw?.stop();
    await fake?.close();
  });

  it('shows the exact cost of priced calls, counts unpriced ones, and charts the days with uPlot', async () => {
    // The chart's code is its own chunk, fetched only once the Usage page draws a chart.
    expect(requested.some((path) => /\/assets\/usage-chart-[^/]+\.js$/.test(path))).toBe(false);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage', exact: true }).click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    const cost = view().locator('[data-total="cost"] .usage-cost');
    await cost.waitFor();

    const costs = await operator.request<{ totals: Totals; daily: Array<Totals & { date: string }> }>('usage.cost', {
      agentScope: 'all',
      range: '30d',
    });
    expect(costs.totals.totalCost).toBeCloseTo(EXPECTED_COST, 10);
    expect(costs.totals.missingCostEntries).toBe(1);
    expect(Number(await cost.getAttribute('data-cost'))).toBeCloseTo(EXPECTED_COST, 10);
    expect(await cost.textContent()).toBe('$0.85');
    await view().getByText('$0.40 input · $0.40 output · $0.05 cache read; 1 call without a price').waitFor();
    const tokens = PRICED.input + PRICED.output + UNPRICED.input + UNPRICED.output;
    expect(digits(await view().locator('[data-total="totalTokens"]').textContent())).toBe(String(tokens));
    expect(digits(await view().locator('[data-total="input"]').textContent())).toBe(
      String(PRICED.input - PRICED.cacheRead + UNPRICED.input),
    );
    expect(digits(await view().locator('[data-total="output"]').textContent())).toBe(
      String(PRICED.output + UNPRICED.output),
    );
    expect(digits(await view().locator('[data-total="cacheRead"]').textContent())).toBe(String(PRICED.cacheRead));

    // By model: the priced one with its cost, the other said to be unpriced.
    const priced = view().locator('.usage-model[data-model="openai/gpt-4.1"]');
    expect(await priced.locator('.usage-cost').textContent()).toBe('$0.85');
    // The day holds both calls: its cost, and the call that had no price.
    expect(await view().locator('.usage-day .usage-cost').textContent()).toBe('$0.85 + 1 unpriced call');
    const unpriced = view().locator('.usage-model[data-model="openai/claw-test-unpriced"]');
    expect(await unpriced.locator('.usage-cost').textContent()).toBe('Not priced');
    // By session, as sessions.usage reports each.
    const main = view().locator('.usage-session[data-session="agent:main:main"]');
    expect(Number(await main.locator('.usage-cost').getAttribute('data-cost'))).toBeCloseTo(EXPECTED_COST, 10);
    expect(await main.locator('[data-tokens]').getAttribute('data-tokens')).toBe(String(PRICED.input + PRICED.output));
    expect(await view().locator('.usage-session[data-session="agent:helper:main"] .usage-cost').textContent()).toBe(
      'Not priced',
    );
    // The day's row and the chart: uPlot drew its canvas, and its chunk was fetched.
    const active = costs.daily.filter((day) => day.totalTokens > 0);
    expect(active).toHaveLength(1);
    const day = view().locator(`.usage-day[data-date="${active[0]!.date}"]`);
    expect(Number(await day.locator('.usage-cost').getAttribute('data-cost'))).toBeCloseTo(EXPECTED_COST, 10);
    await view().locator('.usage-plot[aria-hidden="true"] .uplot canvas').first().waitFor();
    await view().locator('.usage-plot:not([aria-busy])').waitFor();
    expect(requested.some((path) => /\/assets\/usage-chart-[^/]+\.js$/.test(path))).toBe(true);
    await view().getByText(`the most expensive, ${active[0]!.date}, cost $0.85`, { exact: false }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'usage-30d.png'), fullPage: true });
    await view()
      .locator('.usage-chart')
      .screenshot({ path: join(SHOTS, 'usage-30d-chart.png') });

    // Today holds the same calls; the chart is drawn again for one day.
    await view().getByRole('button', { name: 'Today' }).click();
    await view().getByRole('button', { name: 'Today', pressed: true }).waitFor();
    await view()
      .locator('p.muted.small', { hasText: `${active[0]!.date} to ${active[0]!.date}` })
      .waitFor();
    expect(Number(await cost.getAttribute('data-cost'))).toBeCloseTo(EXPECTED_COST, 10);
    await view().locator('.usage-plot .uplot canvas').first().waitFor();
    await page.screenshot({ path: join(SHOTS, 'usage-today.png'), fullPage: true });
    await view()
      .locator('.usage-chart')
      .screenshot({ path: join(SHOTS, 'usage-today-chart.png') });

    // A phone-sized screen: the tables fold into cards, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 800 });
    await view().locator('.usage-plot .uplot').first().waitFor();
    // The document, and the view inside it (main scrolls on its own), are no wider than the screen.
    const overflow = await page.evaluate(() => {
      const main = document.querySelector('main')!;
      return Math.max(document.documentElement.scrollWidth - window.innerWidth, main.scrollWidth - main.clientWidth);
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'usage-narrow.png'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
