/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser and use DOM types.)
/**
 * The Control UI's pages in a real browser (Debian's Chromium driven by playwright-core)
 * against one real gateway in this process: the agent stack with the OpenAI provider talking
 * to the fake LLM server, cron, skills, exec approvals with the exec tool, and the
 * channel-webchat plugin serving an app built for this test.
 *
 * Each page shows what its gateway methods answer, and each of its actions is checked on the
 * gateway side: the config file, the approvals document, cron.list, sessions.usage. Then
 * every page is opened at 1280 and 390 px and must not be wider than the screen. Screenshots
 * go to test-results/web-pages/.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { client, startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';
import { AGENT_STACK } from '../sdk/testing.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-results', 'web-pages');
const TOKEN = 'pages-test-token-0123456789';
const API_KEY = 'sk-pages-very-secret-key';
const PLUGINS = [...AGENT_STACK, 'openai', 'channel-webchat', 'cron', 'skills', 'exec-approvals', 'tools-exec'].map(
  (id) => join(REPO, 'plugins', id),
);
const ROUTES = ['config', 'approvals', 'cron', 'usage', 'skills', 'agents', 'mcp'];

interface Job {
  id: string;
  name: string;
  enabled: boolean;
}

describe.skipIf(!existsSync(CHROMIUM))('Control UI pages in Chromium', () => {
  let fake: FakeLlm;
  let gw: RunningGateway;
  let operator: GatewayClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let configFile: string;
  let workspace: string;
  const pageErrors: string[] = [];

  async function newContext(options: Parameters<Browser['newContext']>[0]): Promise<BrowserContext> {
    const created = await browser.newContext(options);
    created.setDefaultTimeout(10_000);
    return created;
  }

  async function openPage(target: BrowserContext, url: string): Promise<Page> {
    const opened = await target.newPage();
    opened.on('pageerror', (error) => pageErrors.push(`${url}: ${error.message}`));
    opened.on('console', (message) => {
      if (message.type() === 'error' && !/WebSocket/.test(message.text()))
        pageErrors.push(`${url}: console: ${message.text()}`);
    });
    // Confirmations (remove a job) are accepted, as a person clicking OK would.
    opened.on('dialog', (dialog) => void dialog.accept());
    await opened.goto(url);
    return opened;
  }

  const shot = (name: string, target: Page = page) =>
    target.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
  const view = () => page.locator('main');
  const readConfig = () => JSON.parse(readFileSync(configFile, 'utf8'));
  const digits = (text: string | null) => (text ?? '').replace(/\D/g, '');

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const appDir = join(tempDir('claw-web-pages-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    fake = await startFakeLlm();
    const stateDir = tempDir('claw-web-pages-state-');
    workspace = tempDir('claw-web-pages-ws-');
    // A workspace skill that cannot run here: its reasons must show on the Skills page.
    mkdirSync(join(workspace, 'skills', 'lighthouse-log'), { recursive: true });
    writeFileSync(
      join(workspace, 'skills', 'lighthouse-log', 'SKILL.md'),
      '---\nname: lighthouse-log\ndescription: Keeps the lighthouse log.\n' +
        'metadata: { "openclaw": { "requires": { "bins": ["claw-test-no-such-program"] } } }\n---\n\nLog it.\n',
    );
    const config = {
      agents: {
        defaults: { model: 'openai/gpt-4.1', workspace },
        list: [
          { id: 'main', default: true, identity: { name: 'Molty', emoji: '🦞' } },
          { id: 'helper', name: 'Helper', model: 'openai/gpt-4.1-mini' },
        ],
      },
      models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: API_KEY } } },
      messages: { queue: { debounceMs: 20 } },
      tools: { exec: { security: 'allowlist', ask: 'on-miss' } },
      plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } },
    };
    configFile = join(stateDir, 'openclaw.json');
    writeFileSync(
      configFile,
      JSON.stringify({ ...config, gateway: { auth: { mode: 'token', token: TOKEN } } }, null, 2),
    );
    gw = await startGateway({ stateDir, plugins: PLUGINS, config, gateway: { auth: { mode: 'token', token: TOKEN } } });
    operator = await client(gw.url, { token: TOKEN });
    base = `http://127.0.0.1:${gw.port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    context = await newContext({ viewport: { width: 1280, height: 820 }, colorScheme: 'light' });
    page = await openPage(context, `${base}/#token=${TOKEN}`);
    // The first load compiles the app and pairs this browser: slow on a busy machine.
    await page.locator('.pill[data-phase="open"]').waitFor({ timeout: 60_000 });
  }, 180_000); // the gateway with this many plugins takes a while to start on a busy machine

  afterAll(async () => {
    await browser?.close();
    await operator?.close();
    await gw?.stop();
    await fake?.close();
  });

  it('config form: edits one setting with config.patch, keeps secrets, and shows a refusal next to the field', async () => {
    await nav('Config').click();
    await page.getByRole('heading', { name: 'Config', level: 1 }).waitFor();
    const form = page.getByRole('tabpanel', { name: 'Form' });
    // The section of every top-level key in config.schema.
    const { schema } = await operator.request<{ schema: { properties: Record<string, unknown> } }>('config.schema');
    const sections = await form
      .locator('details.cfg-section')
      .evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.path));
    expect(sections).toEqual(Object.keys(schema.properties).filter((key) => key !== '$schema'));

    // A secret is masked and left alone unless typed over.
    await form.locator('details[data-path="models"] > summary').click();
    await form.locator('details[data-path="models.providers"] > summary').click();
    await form.locator('details[data-path="models.providers.openai"] > summary').click();
    const apiKey = form.locator('input[data-path="models.providers.openai.apiKey"]');
    expect(await apiKey.getAttribute('type')).toBe('password');
    expect(await apiKey.inputValue()).toBe('');
    expect(await apiKey.getAttribute('placeholder')).toMatch(/Stored/);
    expect(await form.locator('input[data-path="models.providers.openai.baseUrl"]').inputValue()).toBe(
      fake.openaiBaseUrl,
    );

    await form.locator('details[data-path="messages"] > summary').click();
    await form.locator('details[data-path="messages.queue"] > summary').click();
    const debounce = form.getByLabel('debounceMs', { exact: true });
    expect(await debounce.inputValue()).toBe('20');
    await debounce.fill('45');
    await form.getByRole('status').filter({ hasText: 'Unsaved changes' }).waitFor();
    await shot('config-form');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Saved\./ })
      .waitFor();
    const { config } = await operator.request<{ config: any }>('config.get');
    expect(config.messages.queue.debounceMs).toBe(45);
    expect(readConfig().models.providers.openai.apiKey).toBe(API_KEY);
    expect(readConfig().gateway.auth.token).toBe(TOKEN);
    // The form was rebuilt from the saved file, with the groups that were open still open.
    expect(await form.getByLabel('debounceMs', { exact: true }).inputValue()).toBe('45');

    // Refused: the gateway's problem is shown at the field, and nothing is written.
    await form.locator('details[data-path="gateway"] > summary').click();
    const tick = form.locator('input[data-path="gateway.tickIntervalMs"]');
    await tick.fill('5');
    await form.getByRole('button', { name: 'Save changes' }).click();
    const error = form.locator('[data-field="gateway.tickIntervalMs"] .cfg-error');
    await error.filter({ hasText: /1000/ }).waitFor();
    expect(await tick.getAttribute('aria-invalid')).toBe('true');
    expect(readConfig().gateway.tickIntervalMs).toBeUndefined();
    await shot('config-form-refused');
    await form.getByRole('button', { name: 'Discard changes' }).click();
    await form.getByRole('button', { name: 'Save changes' }).and(page.locator(':disabled')).waitFor();

    // The raw editor is the second tab, reached with the arrow keys.
    await page.getByRole('tab', { name: 'Form' }).focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Raw JSON5' }).getAttribute('aria-selected')).toBe('true');
    const raw = await page.getByLabel('openclaw.json').inputValue();
    expect(raw).toContain('"debounceMs": 45');
    expect(raw).not.toContain(API_KEY);
    await page.keyboard.press('ArrowLeft');
    await form.waitFor();
  });

  it('approvals: a pending command is allowed from the page; allowlist entries are added and removed', async () => {
    await nav('Approvals').click();
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    await view().getByText('Nothing is waiting for a decision.').waitFor();
    const running = gw.kernel.plugins.kernelServices.tools.invoke({
      name: 'exec',
      params: { command: 'touch approved-from-page' },
      toolCallId: 'pages-approval',
      context: { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir: workspace },
    });
    const card = view().locator('.approval-card', { hasText: 'touch approved-from-page' });
    await card.waitFor();
    await card.getByText(workspace).waitFor();
    await shot('approvals-pending');
    // Keyboard: focus the button and press Enter.
    await card.getByRole('button', { name: 'Allow once' }).focus();
    await page.keyboard.press('Enter');
    expect((await running).blocked).toBe(false);
    expect(existsSync(join(workspace, 'approved-from-page'))).toBe(true);
    await view().getByText('Nothing is waiting for a decision.').waitFor();
    expect(await operator.request<unknown[]>('exec.approval.list')).toEqual([]);

    // The policy: main's effective settings from exec.approvals.get, then an allowlist edit.
    await view().locator('.card[data-agent="main"]').getByText('allowlist', { exact: true }).waitFor();
    await view().getByLabel('Program', { exact: true }).fill('/usr/bin/rg');
    await view().getByLabel('For', { exact: true }).selectOption('helper');
    await view().getByRole('button', { name: 'Add to allowlist' }).click();
    const entry = view().getByRole('button', { name: 'Remove /usr/bin/rg from helper' });
    await entry.waitFor();
    const added = await operator.request<{ file: any }>('exec.approvals.get');
    expect(added.file.agents.helper.allowlist).toEqual([expect.objectContaining({ pattern: '/usr/bin/rg' })]);
    await shot('approvals-policy');
    await entry.click();
    await entry.waitFor({ state: 'detached' });
    const removed = await operator.request<{ file: any }>('exec.approvals.get');
    expect(removed.file.agents.helper.allowlist).toEqual([]);
  });

  it('automations: adds a job, runs it now, disables and removes it', async () => {
    await nav('Automations').click();
    await page.getByRole('heading', { name: 'Automations', level: 1 }).waitFor();
    await view().getByText('No jobs yet.').waitFor();
    await view().getByText('Add a job').click();
    await view().getByLabel('Name', { exact: true }).fill('Daily digest');
    await view().getByLabel('Schedule', { exact: true }).selectOption('every');
    await view().getByLabel('When', { exact: true }).fill('6h');
    await view().getByLabel('Message to the agent', { exact: true }).fill('Summarize the day');
    await view().getByLabel('Agent', { exact: true }).selectOption('helper');
    await view().getByLabel('Post the reply where I last chatted').uncheck();
    await view().getByRole('button', { name: 'Add job' }).click();
    const card = view().getByRole('article', { name: 'Daily digest' });
    await card.getByText('every 6 h').waitFor();
    const [job] = (await operator.request<{ jobs: Job[] }>('cron.list', { includeDisabled: true })).jobs;
    expect(job).toMatchObject({
      name: 'Daily digest',
      enabled: true,
      agentId: 'helper',
      schedule: { kind: 'every', everyMs: 6 * 3600_000 },
      payload: { kind: 'agentTurn', message: 'Summarize the day' },
      delivery: { mode: 'none' },
    });

    fake.script({ text: 'Digest: all quiet.' });
    await card.getByRole('button', { name: 'Run Daily digest now' }).click();
    const run = view().locator(`.run[data-job="${job!.id}"]`);
    await run.filter({ hasText: 'ok' }).waitFor({ timeout: 15_000 });
    await run.getByText('Digest: all quiet.').waitFor();
    const runs = await operator.request<{ entries: Array<{ status: string; trigger: string }> }>('cron.runs', {
      jobId: job!.id,
    });
    expect(runs.entries[0]).toMatchObject({ status: 'ok', trigger: 'manual' });
    await shot('cron');

    await card.getByRole('button', { name: 'Disable Daily digest' }).click();
    await card.getByRole('button', { name: 'Enable Daily digest' }).waitFor();
    await card.getByText('Off', { exact: true }).waitFor();
    const listed = await operator.request<{ jobs: Job[] }>('cron.list', { includeDisabled: true });
    expect(listed.jobs.map((item) => item.enabled)).toEqual([false]);

    await card.getByRole('button', { name: 'Remove Daily digest' }).click();
    await card.waitFor({ state: 'detached' });
    await view().getByText('No jobs yet.').waitFor();
    expect((await operator.request<{ jobs: Job[] }>('cron.list', { includeDisabled: true })).jobs).toEqual([]);
  });

  it('usage: totals and per-session numbers match sessions.usage after a turn', async () => {
    fake.script({ text: 'Counted.', usage: { input: 1200, output: 345 } });
    const { runId } = await operator.request<{ runId: string }>('chat.send', {
      idempotencyKey: 'pages-usage-1',
      sessionKey: 'agent:main:main',
      message: 'Count my tokens',
    });
    await operator.request('agent.wait', { runId, timeoutMs: 10_000 });
    const usage = await operator.request<{
      totals: { totalTokens: number; input: number; output: number; totalCost: number };
      sessions: Array<{ key: string; usage: { totalTokens: number } }>;
      aggregates: { daily: Array<{ date: string; tokens: number }> };
    }>('sessions.usage', { agentScope: 'all', range: '30d' });
    const main = usage.sessions.find((row) => row.key === 'agent:main:main')!;
    expect(main.usage.totalTokens).toBeGreaterThanOrEqual(1545);

    await nav('Usage').click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    const total = view().locator('[data-total="totalTokens"]');
    await total.waitFor();
    expect(digits(await total.textContent())).toBe(String(usage.totals.totalTokens));
    expect(digits(await view().locator('[data-total="input"]').textContent())).toBe(String(usage.totals.input));
    expect(digits(await view().locator('[data-total="output"]').textContent())).toBe(String(usage.totals.output));
    const row = view().locator('.usage-session[data-session="agent:main:main"]');
    expect(await row.locator('[data-tokens]').getAttribute('data-tokens')).toBe(String(main.usage.totalTokens));
    // A row for each active day, as sessions.usage counts it; the chart is uPlot's canvas.
    for (const day of usage.aggregates.daily)
      expect(digits(await view().locator(`.usage-day[data-date="${day.date}"] td`).nth(1).textContent())).toBe(
        String(day.tokens),
      );
    await view().locator('.usage-plot .uplot canvas').first().waitFor();
    expect(Number(await view().locator('[data-total="cost"] .usage-cost').getAttribute('data-cost'))).toBe(
      usage.totals.totalCost,
    );
    await view().getByRole('button', { name: '7 days' }).click();
    await view().getByRole('button', { name: '7 days', pressed: true }).waitFor();
    await total.waitFor();
    await shot('usage');
  });

  it('skills: lists skills.status with blocked reasons, and turns one off and on in the config', async () => {
    const report = await operator.request<{
      skills: Array<{ name: string; skillKey: string; eligible: boolean; reasons: string[] }>;
    }>('skills.status', {});
    expect(report.skills.length).toBeGreaterThan(0);
    await nav('Skills').click();
    await page.getByRole('heading', { name: 'Skills', level: 1 }).waitFor();
    await view().locator('.skill').first().waitFor();
    const shown = await view()
      .locator('.skill')
      .evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.skill));
    expect(shown.sort()).toEqual(report.skills.map((skill) => skill.skillKey).sort());
    const blocked = report.skills.find((skill) => skill.name === 'lighthouse-log')!;
    expect(blocked.eligible).toBe(false);
    expect(blocked.reasons.join(' ')).toContain('claw-test-no-such-program');
    for (const skill of report.skills.filter((item) => item.reasons.length))
      await view().locator(`.skill[data-skill="${skill.skillKey}"] .reasons`).getByText(skill.reasons[0]!).waitFor();
    await shot('skills');

    const target = report.skills.find((skill) => skill.eligible) ?? report.skills[0]!;
    const card = view().locator(`.skill[data-skill="${target.skillKey}"]`);
    await card.getByRole('button', { name: `Disable ${target.name}` }).click();
    await card.getByRole('button', { name: `Enable ${target.name}` }).waitFor();
    await card.getByText('Off', { exact: true }).waitFor();
    expect(readConfig().skills.entries[target.skillKey].enabled).toBe(false);
    await card.getByRole('button', { name: `Enable ${target.name}` }).click();
    await card.getByRole('button', { name: `Disable ${target.name}` }).waitFor();
    expect(readConfig().skills.entries[target.skillKey].enabled).toBe(true);
  });

  it('agents: lists agents.list with identity, model and workspace', async () => {
    const answer = await operator.request<{
      defaultId: string;
      agents: Array<{ id: string; model?: { primary: string }; workspace: string }>;
    }>('agents.list', {});
    expect(answer.agents.map((agent) => agent.id)).toEqual(['main', 'helper']);
    expect(answer.agents[0]!.workspace).toBe(workspace);
    await nav('Agents').click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    for (const agent of answer.agents) {
      const card = view().locator(`.agent[data-agent="${agent.id}"]`);
      await card.getByText(agent.model!.primary, { exact: true }).waitFor();
      await card.getByText(agent.workspace, { exact: true }).waitFor();
    }
    const main = view().locator('.agent[data-agent="main"]');
    await main.getByRole('heading', { name: '🦞 Molty' }).waitFor();
    await main.getByText('Default').waitFor();
    await shot('agents');
    await main.getByRole('link', { name: 'Skills' }).click();
    await page.getByRole('heading', { name: 'Skills', level: 1 }).waitFor();
    expect(await page.getByLabel('Agent', { exact: true }).inputValue()).toBe('main');
  });

  it('every page fits a 390 px phone and a 1280 px desktop without horizontal scrolling', async () => {
    const phone = await newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true });
    try {
      const small = await openPage(phone, `${base}/#token=${TOKEN}`);
      await small.locator('.pill[data-phase="open"]').waitFor();
      for (const [target, width, label] of [
        [page, 1280, 'desktop'],
        [small, 390, 'phone'],
      ] as const) {
        for (const route of ROUTES) {
          await target.evaluate((hash) => (location.hash = hash), `#/${route}`);
          await target.locator('main h1').waitFor();
          await target.waitForFunction(() => !document.querySelector('main [aria-busy="true"]'));
          // The document, and the view inside it (main scrolls on its own), are no wider than the screen.
          const sizes = await target.evaluate(() => {
            const main = document.querySelector('main')!;
            return {
              document: document.documentElement.scrollWidth,
              viewport: window.innerWidth,
              view: main.scrollWidth - main.clientWidth,
            };
          });
          expect(sizes.viewport, route).toBe(width);
          expect(sizes.document, `${route} at ${label}`).toBeLessThanOrEqual(sizes.viewport);
          expect(sizes.view, `${route} scrolls sideways at ${label}`).toBeLessThanOrEqual(0);
          await shot(`${route}-${label}`, target);
        }
      }
    } finally {
      await phone.close();
    }
  });

  it('ran without script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
