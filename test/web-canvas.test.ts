/**
 * claw's web UI as a canvas node, in a real browser (Debian's Chromium driven by
 * playwright-core) against a real gateway: the tab turns itself into a node (role "node",
 * platform "web"), approves its own command surface with the button the page shows, and the
 * agent's canvas tool (through the gateway's tools.invoke) presents a page from the
 * workspace, reads it back with eval, sees it reload after a change, and snapshots it. The
 * page runs in an opaque origin: it cannot read the app's storage.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../apps/cli/gateway-client.js';
import { client, startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'canvas-ui-token-0123456789abcdef';
const PLUGINS = ['channel-webchat', 'canvas'].map((id) => join(REPO, 'plugins', id));

interface Invoked {
  ok: boolean;
  output?: { content: Array<{ type: string; text?: string; data?: string; mimeType?: string }> };
  error?: { code: string; message: string };
}

describe.skipIf(!existsSync(CHROMIUM))('the web UI as a canvas', () => {
  let gw: RunningGateway;
  let browser: Browser;
  let page: Page;
  let operator: GatewayClient;
  let canvasDir: string;

  const canvas = async (args: Record<string, unknown>): Promise<Invoked> => {
    const answer = await operator.request<Invoked>('tools.invoke', {
      name: 'canvas',
      args,
      sessionKey: 'agent:main:main',
      idempotencyKey: `canvas-${Math.random()}`,
    });
    expect(answer.ok, JSON.stringify(answer.error)).toBe(true);
    return answer;
  };
  const textOf = (answer: Invoked) => answer.output!.content.find((part) => part.type === 'text')!.text!;

  beforeAll(async () => {
    const appDir = join(tempDir('claw-canvas-ui-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    gw = await startGateway({
      plugins: PLUGINS,
      config: { plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } } },
      gateway: { auth: { mode: 'token', token: TOKEN } },
    });
    canvasDir = join(gw.stateDir, 'workspace', 'canvas');
    mkdirSync(canvasDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(canvasDir, 'style.css'), 'h1 { color: rgb(200, 30, 30); }');
    writeFileSync(
      join(canvasDir, 'index.html'),
      '<!doctype html><html><head><title>Board</title><link rel="stylesheet" href="style.css"></head>' +
        '<body><h1 id="t">Hello canvas</h1><script>window.answer = 40 + 2;</script></body></html>',
    );
    operator = await client(gw.url, { token: TOKEN });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    await page.goto(`http://127.0.0.1:${gw.port}/#/canvas?token=${TOKEN}`);
    await page.locator('.pill[data-phase="open"]').waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    operator?.close();
    await gw?.stop();
  });

  it('turns the tab into a canvas node and approves its own surface on request', async () => {
    await page.getByLabel('Use this tab as a canvas').check();
    const approve = page.locator('#canvas-approve');
    await approve.waitFor();
    await page.locator('#canvas-status[data-state="pending"]').waitFor();
    expect(await approve.textContent()).toContain('canvas.present');
    await approve.click();
    await approve.waitFor({ state: 'hidden' });
    await page.locator('#canvas-status[data-state="open"]').waitFor();
    const listed = await operator.request<{ nodes: Array<Record<string, any>> }>('node.list', {});
    const node = listed.nodes.find((entry) => entry.platform === 'web' && entry.connected);
    expect(node?.commands).toEqual(expect.arrayContaining(['canvas.present', 'canvas.eval', 'canvas.snapshot']));
  });

  it('presents a workspace page, evaluates in it, reloads it on change and snapshots it', async () => {
    const presented = await canvas({ action: 'present', target: 'index.html' });
    expect(JSON.parse(textOf(presented)).url).toMatch(/^\/__openclaw__\/canvas\/v1\.main\.\d+\.[\w-]+\/index\.html$/);
    const frame = page.frameLocator('#canvas-frame');
    await expect.poll(() => frame.locator('#t').textContent()).toBe('Hello canvas');

    const evaluated = await canvas({ action: 'eval', javaScript: "document.title + ':' + window.answer" });
    expect(textOf(evaluated)).toBe('Board:42');

    // Agent-written pages get an opaque origin: the app's storage and sign-in are out of reach.
    const sandboxed = await canvas({
      action: 'eval',
      javaScript:
        "(() => { try { return 'read:' + localStorage.length } catch (e) { return 'blocked:' + e.name } })() + ' ' + origin",
    });
    expect(textOf(sandboxed)).toBe('blocked:SecurityError null');

    writeFileSync(
      join(canvasDir, 'index.html'),
      '<!doctype html><html><head><title>Board 2</title><link rel="stylesheet" href="style.css"></head>' +
        '<body><h1 id="t">Changed on disk</h1></body></html>',
    );
    await expect.poll(() => frame.locator('#t').textContent()).toBe('Changed on disk');

    const shot = await canvas({ action: 'snapshot', maxWidth: 300 });
    const image = shot.output!.content.find((part) => part.type === 'image')!;
    expect(image.mimeType).toBe('image/png');
    const png = Buffer.from(image.data!, 'base64');
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(png.readUInt32BE(16)).toBe(300);
    mkdirSync(join(REPO, 'test-results', 'web-ui'), { recursive: true });
    writeFileSync(join(REPO, 'test-results', 'web-ui', 'canvas-snapshot.png'), png);
    await page.screenshot({ path: join(REPO, 'test-results', 'web-ui', 'canvas.png') });

    await canvas({ action: 'hide' });
    await page.locator('#canvas-frame').waitFor({ state: 'hidden' });
  });

  it('comes back after a reload with a key of its own (the shared secret is no longer kept)', async () => {
    await page.reload();
    expect(await page.evaluate(() => localStorage.getItem('claw.auth.secret'))).toBeNull();
    await page.locator('#canvas-status[data-state="open"]').waitFor();
    expect(await page.getByLabel('Use this tab as a canvas').isChecked()).toBe(true);
    await canvas({ action: 'present', target: 'index.html' });
    await expect
      .poll(async () => textOf(await canvas({ action: 'eval', javaScript: 'document.title' })))
      .toBe('Board 2');
  });
});
