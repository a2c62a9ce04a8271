/// <reference lib="dom" />
/**
 * The web UI's Nodes page in Chromium against a real gateway with fake nodes on OpenClaw's node
 * wire: pairing requests (a new device, and a paired node asking for its commands) approved and
 * rejected, a request arriving while the page is open, rename and remove, and a setup code with
 * its QR. Screenshots go to test-results/web-ui/.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSetupCode } from '../plugins/gateway/setup-codes.js';
import { AGENT_STACK } from '../sdk/testing.js';
import { connectFakeNode, type FakeNode } from './fakes/node.js';
import { startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-results', 'web-ui');
const TOKEN = 'nodes-ui-token-0123456789';
const PLUGINS = [...AGENT_STACK, 'channel-webchat'].map((id) => join(REPO, 'plugins', id));

describe.skipIf(!existsSync(CHROMIUM))('web UI: Nodes page', () => {
  let gw: RunningGateway;
  let browser: Browser;
  let page: Page;
  const nodes: FakeNode[] = [];
  const pageErrors: string[] = [];

  /** A node from another machine: it waits for an operator to approve its device. */
  const remoteNode = (displayName: string) =>
    connectFakeNode({
      url: gw.url,
      headers: { 'x-forwarded-for': '198.51.100.20' },
      displayName,
      auth: { token: TOKEN },
    })
      .then(() => undefined)
      .catch(() => undefined);

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const appDir = join(tempDir('claw-web-nodes-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    gw = await startGateway({
      plugins: PLUGINS,
      config: { plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } } },
      gateway: { auth: { mode: 'token', token: TOKEN } },
    });
    // Paired on loopback; the commands it declares wait for approval.
    nodes.push(
      await connectFakeNode({
        url: gw.url,
        displayName: 'Kitchen',
        platform: 'windows',
        commands: ['device.info'],
        auth: { token: TOKEN },
      }),
    );
    await remoteNode('Garage');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`http://127.0.0.1:${gw.port}/#token=${TOKEN}`);
    await page.locator('.pill[data-phase="open"]').waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all(nodes.map((node) => node.close()));
    await gw?.stop();
  });

  const pendingRows = () => page.locator('tr[data-request]');
  const nodeRow = (text: string) => page.locator('tr[data-node]').filter({ hasText: text });

  it('lists the pairing requests and the connected node', async () => {
    await page.getByRole('link', { name: 'Nodes' }).click();
    await page.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
    await pendingRows().nth(1).waitFor();
    expect(await pendingRows().count()).toBe(2);
    await pendingRows().filter({ hasText: 'Garage' }).getByText('pairing (no commands)').waitFor();
    await pendingRows().filter({ hasText: 'Kitchen' }).getByText('device.info').waitFor();
    await nodeRow('Kitchen').getByText('Connected').waitFor();
    await page.screenshot({ path: join(SHOTS, 'nodes.png') });
  });

  it("approving Kitchen's request makes its command effective; Garage is rejected", async () => {
    await page.getByRole('button', { name: 'Approve Kitchen' }).click();
    await nodeRow('Kitchen').locator('.node-commands', { hasText: 'device.info' }).waitFor();
    await page.getByRole('button', { name: 'Reject Garage' }).click();
    await page.getByText('No pairing requests.').waitFor();
  });

  it('a request made while the page is open shows up by itself', async () => {
    await remoteNode('Porch');
    await pendingRows().filter({ hasText: 'Porch' }).waitFor();
    await page.getByRole('button', { name: 'Approve Porch' }).click();
    await nodeRow('Porch').waitFor();
  });

  it('renames and removes a node', async () => {
    page.once('dialog', (dialog) => void dialog.accept('Den'));
    await page.getByRole('button', { name: 'Rename Kitchen' }).click();
    await nodeRow('Den').waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Remove Porch' }).click();
    await nodeRow('Porch').waitFor({ state: 'detached' });
  });

  it('makes a setup code with its QR', async () => {
    await page.getByLabel('Gateway URL the node will use').fill(gw.url);
    await page.getByRole('button', { name: 'Make a setup code' }).click();
    const code = (await page.locator('.setup-code-text').textContent())!;
    expect(decodeSetupCode(code)).toMatchObject({ url: gw.url });
    await page.getByRole('img', { name: 'Setup code as a QR code' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'nodes-setup-code.png') });
    expect(pageErrors).toEqual([]);
  });
});
