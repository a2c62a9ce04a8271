/**
 * The web UI's exec approval prompt in a real browser (Debian's Chromium driven by
 * playwright-core) against a real gateway in this process: a host command waits for a
 * person, the card shows the exact command, and the buttons decide it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_STACK } from '../sdk/testing.js';
import { startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'approvals-ui-token-0123456789';
const PLUGINS = [...AGENT_STACK, 'channel-webchat', 'tools-exec', 'exec-approvals'].map((id) =>
  join(REPO, 'plugins', id),
);

describe.skipIf(!existsSync(CHROMIUM))('exec approval prompt in the web UI', () => {
  let gw: RunningGateway;
  let browser: Browser;
  let page: Page;
  const ws = tempDir('claw-approvals-ws-');

  const exec = (command: string) =>
    gw.kernel.plugins.kernelServices.tools.invoke({
      name: 'exec',
      params: { command },
      toolCallId: `ui-${command}`,
      context: { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir: ws },
    });

  beforeAll(async () => {
    const appDir = join(tempDir('claw-approvals-ui-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    const config = {
      tools: { exec: { security: 'allowlist', ask: 'on-miss' } },
      plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } },
    };
    gw = await startGateway({ plugins: PLUGINS, config, gateway: { auth: { mode: 'token', token: TOKEN } } });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    await page.goto(`http://127.0.0.1:${gw.port}/#token=${TOKEN}`);
    await page.locator('.pill[data-phase="open"]').waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('shows the exact command and runs it on Allow once', async () => {
    const running = exec('touch from-ui');
    const dialog = page.getByRole('alertdialog', { name: 'Exec approval' });
    await dialog.waitFor();
    await expect.poll(() => dialog.locator('code').textContent()).toBe('touch from-ui');
    expect(await dialog.textContent()).toContain(`in ${ws}`);
    mkdirSync(join(REPO, 'test-results', 'web-ui'), { recursive: true });
    await page.screenshot({ path: join(REPO, 'test-results', 'web-ui', 'exec-approval.png') });
    expect(existsSync(join(ws, 'from-ui'))).toBe(false);
    await dialog.getByRole('button', { name: 'Allow once' }).click();
    const outcome = await running;
    expect(outcome.blocked).toBe(false);
    expect(existsSync(join(ws, 'from-ui'))).toBe(true);
    await dialog.waitFor({ state: 'detached' });
  });

  it('Deny refuses the command; Always allow here stops asking for it', async () => {
    const denied = exec('touch denied');
    const dialog = page.getByRole('alertdialog', { name: 'Exec approval' });
    await dialog.getByRole('button', { name: 'Deny' }).click();
    expect((await denied).message.content[0]).toMatchObject({ text: expect.stringMatching(/an operator denied it/) });
    expect(existsSync(join(ws, 'denied'))).toBe(false);
    await dialog.waitFor({ state: 'detached' });

    const always = exec('touch always');
    await dialog.getByRole('button', { name: 'Always allow here' }).click();
    expect((await always).blocked).toBe(false);
    await dialog.waitFor({ state: 'detached' });
    // Remembered: no prompt this time.
    expect((await exec('touch always')).blocked).toBe(false);
    expect(await page.getByRole('alertdialog').count()).toBe(0);
  });

  it('shows the call’s env and the approver’s warnings (git is a launcher)', async () => {
    const asked = gw.kernel.plugins.kernelServices.tools.invoke({
      name: 'exec',
      params: { command: 'git --version', env: { GREETING: 'hi' } },
      toolCallId: 'ui-env',
      context: { agentId: 'main', sessionKey: 'agent:main:main', workspaceDir: ws },
    });
    const dialog = page.getByRole('alertdialog', { name: 'Exec approval' });
    await expect.poll(() => dialog.locator('code').textContent()).toBe('git --version');
    expect(await dialog.locator('pre.env').textContent()).toBe('GREETING=hi');
    expect(await dialog.getByRole('note').textContent()).toMatch(/git is a launcher/);
    await dialog.getByRole('button', { name: 'Deny' }).click();
    expect((await asked).blocked).toBe(true);
    await dialog.waitFor({ state: 'detached' });
  });

  it('a card answered elsewhere (or that expired) goes away', async () => {
    const running = exec('touch elsewhere');
    const dialog = page.getByRole('alertdialog', { name: 'Exec approval' });
    await dialog.waitFor();
    const service = (await gw.kernel.plugins.kernelServices.capabilities.find('service', 'exec-approvals'))!.api as {
      list(): Array<{ id: string }>;
      resolve(id: string, decision: string): string;
    };
    expect(service.resolve(service.list()[0]!.id, 'deny')).toBe('resolved');
    await dialog.waitFor({ state: 'detached' });
    expect((await running).blocked).toBe(true);
  });
});
