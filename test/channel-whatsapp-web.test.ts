/// <reference lib="dom" />
/**
 * Linking WhatsApp from the web UI's Channels page, in Debian's Chromium: the page asks the
 * gateway for a QR login (web.login.start), shows the code as an image, follows it until
 * the phone (the fake Baileys socket) scans it (web.login.wait), and the account turns
 * connected. A screenshot goes to test-results/web-ui/whatsapp-qr.png.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_STACK, lastUserText, scriptedModel } from '../sdk/testing.js';
import { createWhatsAppPlugin } from '../plugins/channel-whatsapp/index.js';
import { qrToSvgDataUrl } from '../plugins/channel-whatsapp/qr.js';
import { FakeWhatsApp } from './fakes/whatsapp-socket.js';
import { startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'wa-ui-test-token-0123456789';

describe.skipIf(!existsSync(CHROMIUM))('WhatsApp QR login in the web UI', () => {
  const fake = new FakeWhatsApp();
  let gw: RunningGateway;
  let browser: Browser;

  beforeAll(async () => {
    const appDir = join(tempDir('claw-wa-web-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    gw = await startGateway({
      plugins: [
        ...[...AGENT_STACK, 'channel-webchat'].map((id) => join(REPO, 'plugins', id)),
        createWhatsAppPlugin({ socketFactory: fake.factory }),
        scriptedModel((request) => `echo: ${lastUserText(request)}`),
      ],
      config: {
        agents: { defaults: { model: 'scripted/echo' } },
        plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } },
        channels: { whatsapp: { dmPolicy: 'allowlist', allowFrom: ['+4915112345678'] } },
      },
      gateway: { auth: { mode: 'token', token: TOKEN } },
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('shows the QR, and the account is connected once the phone scans it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${gw.port}/#token=${TOKEN}`);
    await page.locator('.pill[data-phase="open"]').waitFor();
    await page.getByRole('link', { name: 'Channels' }).click();
    const card = page.locator('[data-channel="whatsapp"]');
    await card.getByText('not linked', { exact: false }).first().waitFor();
    await card.getByRole('button', { name: 'Link with QR code' }).click();

    const image = page.getByRole('img', { name: 'QR code to scan with the phone' });
    await image.waitFor();
    expect(await image.getAttribute('src')).toBe(await qrToSvgDataUrl(fake.qrs[0]!));
    mkdirSync(join(REPO, 'test-results', 'web-ui'), { recursive: true });
    await page.screenshot({ path: join(REPO, 'test-results', 'web-ui', 'whatsapp-qr.png') });

    fake.rotateQr();
    const next = await qrToSvgDataUrl(fake.qrs[1]!);
    const shown = (src: string) =>
      document.querySelector('img[alt="QR code to scan with the phone"]')?.getAttribute('src') === src;
    await page.waitForFunction(shown, next);

    fake.scan();
    await page.getByText('WhatsApp is linked as +15550000001.').first().waitFor();
    await card.getByText('connected', { exact: false }).first().waitFor();
    expect(await image.count()).toBe(0);
    await context.close();
  });
});
