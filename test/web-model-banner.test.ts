/// <reference lib="dom" />
/**
 * The Control UI's "no usable model" notice in a real browser (Debian's Chromium driven by
 * playwright-core): a gateway with the agent stack and no model shows it above every view,
 * naming the problem, linking to Setup (`#/setup`) and naming `claw onboard`; once a model is
 * configured (config.patch, as the Setup view or `claw onboard` would write it) the gateway
 * sends a fresh health event and the notice leaves without a reload. Screenshots go to
 * test-results/web-model-banner/.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { AGENT_STACK } from '../sdk/testing.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { client, startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-results', 'web-model-banner');
const TOKEN = 'banner-test-token-0123456789';
const PLUGINS = [...AGENT_STACK, 'openai', 'channel-webchat'].map((id) => join(REPO, 'plugins', id));

describe.skipIf(!existsSync(CHROMIUM))('the no-model notice in the Control UI', () => {
  let fake: FakeLlm;
  let gw: RunningGateway;
  let operator: GatewayClient;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const appDir = join(tempDir('claw-banner-ui-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    fake = await startFakeLlm();
    const stateDir = tempDir('claw-banner-state-');
    const config = { plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } } };
    const gateway = { auth: { mode: 'token', token: TOKEN } };
    // On disk too, so config.patch edits a file, as it does for a user.
    writeFileSync(join(stateDir, 'openclaw.json'), JSON.stringify({ ...config, gateway }, null, 2));
    gw = await startGateway({ stateDir, plugins: PLUGINS, config, gateway });
    operator = await client(gw.url, { token: TOKEN });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`http://127.0.0.1:${gw.port}/#token=${TOKEN}`);
    // A busy machine builds the app and starts Chromium slowly.
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await operator?.close();
    await gw?.stop();
    await fake?.close();
  });

  const notice = () => page.locator('.model-banner');

  it('shows what is wrong and how to fix it on every view', async () => {
    // The first health call loads the models and provider plugins: slow on a busy machine.
    await notice().getByText('No usable model').waitFor({ timeout: 30_000 });
    await expect(notice().innerText()).resolves.toContain('no model is configured for agent "main"');
    expect(await notice().getByRole('link', { name: 'Setup' }).getAttribute('href')).toBe('#/setup');
    expect(await notice().locator('code').innerText()).toBe('claw onboard');
    await page.screenshot({ path: join(SHOTS, 'chat.png') });
    for (const view of ['Overview', 'Sessions', 'Config']) {
      await page.getByRole('link', { name: view, exact: true }).click();
      await page.waitForFunction((title) => document.title.startsWith(title), view);
      expect(await notice().isVisible(), view).toBe(true);
    }
    await page.screenshot({ path: join(SHOTS, 'config.png') });
    // On a phone the notice wraps instead of widening the page.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(SHOTS, 'phone.png') });
    await page.setViewportSize({ width: 1280, height: 820 });
  });

  it('leaves by itself once a model is configured', async () => {
    const { hash } = await operator.request<{ hash: string }>('config.get');
    await operator.request('config.patch', {
      baseHash: hash,
      raw: JSON.stringify({
        agents: { defaults: { model: 'openai/gpt-4.1' } },
        models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-banner-test' } } },
      }),
    });
    await notice().waitFor({ state: 'hidden' });
    const health = await operator.request<{ model?: unknown }>('health');
    expect(health.model).toEqual({ ok: true, primary: 'openai/gpt-4.1' });
    await page.screenshot({ path: join(SHOTS, 'configured.png') });
  });

  it('ran without script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
