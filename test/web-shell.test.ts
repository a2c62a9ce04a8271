/// <reference lib="dom" />
// (page.evaluate callbacks run in the browser and use DOM types.)
/**
 * The Control UI's shell in a real browser (Debian's Chromium driven by playwright-core)
 * against a real gateway in this process: tool calls shown as cards in the chat and exec
 * approvals answered inside it (the fake LLM server scripts the calls), every page the nav
 * offers at desktop and phone widths, the menu and the skip link from the keyboard, and the
 * loading and error states. Screenshots go to test-results/web-ui/ (ignored by git).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_STACK } from '../sdk/testing.js';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { startGateway, type RunningGateway } from './gateway-helpers.js';
import { REPO, tempDir } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-results', 'web-ui');
const TOKEN = 'shell-test-token-0123456789';
const PLUGINS = [
  ...AGENT_STACK,
  'openai',
  'channel-webchat',
  'tools-exec',
  'tools-fs',
  'exec-approvals',
  'cron',
  'skills',
].map((id) => join(REPO, 'plugins', id));
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

// Two browsers and a gateway share a busy machine with other suites: generous limits, no sleeps.
describe.skipIf(!existsSync(CHROMIUM))('the Control UI shell in Chromium', { timeout: 90_000 }, () => {
  let fake: FakeLlm;
  let gw: RunningGateway;
  let browser: Browser;
  let base: string;
  const pageErrors: string[] = [];

  async function openApp(viewport: { width: number; height: number }, hash = ''): Promise<Page> {
    const context: BrowserContext = await browser.newContext({ viewport, colorScheme: 'light' });
    // Fail naming the locator that did not show up, well before the test's own timeout.
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(`${viewport.width}: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/WebSocket/.test(message.text()))
        pageErrors.push(`${viewport.width}: console: ${message.text()}`);
    });
    await page.goto(`${base}/#token=${TOKEN}`);
    await page.locator('.pill[data-phase="open"]').waitFor();
    if (hash) await page.evaluate((route) => (location.hash = route), hash);
    return page;
  }

  /** The view has its heading and nothing in it is still loading. */
  async function settled(page: Page): Promise<void> {
    await page.waitForFunction(() => {
      const main = document.querySelector('main');
      return !!main?.querySelector('h1') && !main.querySelector('[aria-busy="true"]');
    });
  }

  /** Wider than the window: the document, or any element outside a code block's own scroller. */
  function overflow(page: Page) {
    return page.evaluate(() => {
      const width = window.innerWidth;
      const offenders: string[] = [];
      // Visually hidden (clipped to a pixel, like a table's header row on a phone): not on screen.
      const clipped = (element: Element | null): boolean =>
        !!element && (getComputedStyle(element).clip.startsWith('rect') || clipped(element.parentElement));
      for (const element of document.body.querySelectorAll('*')) {
        if (element.parentElement?.closest('pre') || element.closest('.skip') || clipped(element)) continue;
        const rect = element.getBoundingClientRect();
        if (rect.width === 0 && rect.height === 0) continue;
        if (rect.right > width + 0.5)
          offenders.push(
            `<${element.tagName.toLowerCase()} class="${element.getAttribute('class') ?? ''}"> ends at ${Math.round(rect.right)}: ${(element.textContent ?? '').trim().slice(0, 50)}`,
          );
      }
      return { scrollWidth: document.documentElement.scrollWidth, width, offenders: offenders.slice(0, 8) };
    });
  }

  beforeAll(async () => {
    mkdirSync(join(SHOTS, 'pages'), { recursive: true });
    const appDir = join(tempDir('claw-web-shell-'), 'app');
    execFileSync(process.execPath, [join(REPO, 'apps', 'web', 'build.mjs'), '--out', appDir], { stdio: 'pipe' });
    fake = await startFakeLlm();
    const config = {
      agents: { defaults: { model: 'openai/gpt-4.1' } },
      models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-shell-test' } } },
      messages: { queue: { debounceMs: 20 } },
      tools: { exec: { security: 'allowlist', ask: 'on-miss' } },
      plugins: { entries: { 'channel-webchat': { config: { root: appDir } } } },
    };
    gw = await startGateway({ plugins: PLUGINS, config, gateway: { auth: { mode: 'token', token: TOKEN } } });
    base = `http://127.0.0.1:${gw.port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await fake?.close();
  });

  it('shows each tool call as a card, asks for the exec approval inside the chat, and keeps both in history', async () => {
    fake.script(
      {
        text: 'Let me make that file.',
        toolCalls: [{ id: 'call_touch', name: 'exec', arguments: { command: 'touch made-by-agent' } }],
      },
      { toolCalls: [{ id: 'call_read', name: 'read', arguments: { path: 'no-such-file.txt' } }] },
      { text: 'Done: the file is there.' },
    );
    const page = await openApp(DESKTOP);
    await settled(page);
    await page.getByRole('textbox', { name: 'Message' }).fill('Make a file please');
    await page.keyboard.press('Enter');

    const touch = page.locator('.tool-call[data-tool-call-id="call_touch"]');
    await touch.and(page.locator('[data-status="running"]')).waitFor();
    expect(await touch.locator('summary').textContent()).toMatch(/^exec.*command: touch made-by-agent.*Running…$/);
    // The request of this conversation is in the thread, not in the bar above every view.
    const inline = page.locator('.messages').getByRole('alertdialog', { name: 'Exec approval' });
    await expect.poll(() => inline.locator('code').textContent()).toBe('touch made-by-agent');
    expect(await page.locator('.approvals').isHidden()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'chat-tool-approval.png') });
    expect(existsSync(join(gw.stateDir, 'workspace', 'made-by-agent'))).toBe(false);

    await inline.getByRole('button', { name: 'Allow once' }).click();
    await page.locator('.approval-outcome', { hasText: 'Allowed once: touch made-by-agent' }).waitFor();
    await touch.and(page.locator('[data-status="ok"]')).waitFor();
    const read = page.locator('.tool-call[data-tool-call-id="call_read"]');
    await read.and(page.locator('[data-status="error"]')).waitFor();
    await page.locator('.msg.assistant', { hasText: 'Done: the file is there.' }).waitFor();
    expect(existsSync(join(gw.stateDir, 'workspace', 'made-by-agent'))).toBe(true);
    // In the order it happened: the words before the call, the calls, then the answer.
    const order = await page
      .locator('.messages > li')
      .evaluateAll((items) =>
        items.map((item) =>
          item.classList.contains('tool-call')
            ? `tool:${item.getAttribute('data-tool-call-id')}`
            : item.classList.contains('approval-inline')
              ? 'approval'
              : (item.querySelector('.body')?.textContent ?? '').trim(),
        ),
      );
    expect(order).toEqual([
      'Make a file please',
      'Let me make that file.',
      'tool:call_touch',
      'approval',
      'tool:call_read',
      'Done: the file is there.',
    ]);

    // A card opens and closes from the keyboard and shows the arguments and the result.
    await read.locator('summary').focus();
    await page.keyboard.press('Enter');
    await read.locator('.tool-detail').getByText('no-such-file.txt').first().waitFor();
    await read.locator('.tool-detail .tool-label', { hasText: 'Error' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'chat-tool-cards.png') });
    await page.keyboard.press('Space');
    await read.locator('.tool-detail').waitFor({ state: 'hidden' });

    // From chat.history after a reload: the same cards, each with its result.
    await page.reload();
    await page.locator('.pill[data-phase="open"]').waitFor();
    await page.locator('.tool-call[data-tool-call-id="call_touch"][data-status="ok"]').waitFor();
    await page.locator('.tool-call[data-tool-call-id="call_read"][data-status="error"]').waitFor();
    await page.locator('.msg.assistant', { hasText: 'Let me make that file.' }).waitFor();
    await page.close();
  });

  it('leaves another conversation’s approval request in the bar above the views', async () => {
    const page = await openApp(DESKTOP);
    await settled(page);
    const running = gw.kernel.plugins.kernelServices.tools.invoke({
      name: 'exec',
      params: { command: 'touch elsewhere' },
      toolCallId: 'shell-elsewhere',
      context: { agentId: 'main', sessionKey: 'agent:main:elsewhere', workspaceDir: join(gw.stateDir, 'workspace') },
    });
    const bar = page.locator('.approvals').getByRole('alertdialog', { name: 'Exec approval' });
    await bar.getByRole('button', { name: 'Deny' }).click();
    expect((await running).blocked).toBe(true);
    expect(await page.locator('.messages .approval-inline').count()).toBe(0);
    await page.close();
  });

  for (const [name, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    it(`fits every page the nav offers at ${viewport.width} px, reaching each through the nav`, async () => {
      const page = await openApp(viewport);
      await settled(page);
      const nav = page.getByRole('navigation', { name: 'Main' });
      const menu = page.getByRole('button', { name: 'Menu' });
      const routes = await page
        .locator('nav[aria-label="Main"] a[data-route]')
        .evaluateAll((links) => links.map((link) => ({ route: link.dataset.route!, label: link.textContent! })));
      expect(routes.length).toBeGreaterThanOrEqual(7);
      const folded = await menu.isVisible();
      // A phone gets the menu; a desktop shows every link in the bar.
      expect(folded).toBe(name === 'phone');
      if (!folded) {
        const clipped = await page.evaluate(() => {
          const row = document.querySelector('nav[aria-label="Main"]')!.getBoundingClientRect();
          return [...document.querySelectorAll('nav[aria-label="Main"] a')]
            .filter((link) => link.getBoundingClientRect().right > row.right + 0.5)
            .map((link) => link.textContent);
        });
        expect(clipped).toEqual([]);
      }
      for (const { route, label } of routes) {
        if (folded) {
          await menu.click();
          expect(await menu.getAttribute('aria-expanded')).toBe('true');
          if (route === routes[0]!.route)
            await page.screenshot({ path: join(SHOTS, `nav-menu-${viewport.width}.png`) });
          await nav.getByRole('link', { name: label, exact: true }).click();
          expect(await menu.getAttribute('aria-expanded')).toBe('false');
          expect(await nav.isVisible()).toBe(false);
        } else {
          await nav.getByRole('link', { name: label, exact: true }).click();
        }
        // The link is marked when the route has rendered, a moment after the hash changes.
        await page.waitForFunction(
          (expected) =>
            location.hash.startsWith(`#/${expected}`) &&
            document.querySelector(`#main-nav a[data-route="${expected}"]`)?.getAttribute('aria-current') === 'page',
          route,
        );
        expect(await page.locator(`#main-nav a[data-route="${route}"]`).getAttribute('aria-current')).toBe('page');
        await settled(page);
        await page.screenshot({ path: join(SHOTS, 'pages', `${route}-${viewport.width}.png`) });
        const measured = await overflow(page);
        expect(measured.offenders, `${route} at ${viewport.width} px`).toEqual([]);
        expect(measured.scrollWidth, `${route} at ${viewport.width} px`).toBeLessThanOrEqual(measured.width);
      }
      await page.close();
    });
  }

  it('never cuts a nav link off: wide screens show every link (wrapping if need be), narrow ones fold them', async () => {
    const page = await openApp(DESKTOP, '#/overview');
    await settled(page);
    for (const width of [1280, 1024, 900, 800, 761, 700, 390]) {
      await page.setViewportSize({ width, height: 800 });
      // The fold follows the breakpoint: wait for the bar to match the width.
      const state = await page.waitForFunction((narrow) => {
        const toggle = document.querySelector<HTMLElement>('.nav-toggle')!;
        if (toggle.hidden === narrow) return false;
        const links = [...document.querySelectorAll('nav[aria-label="Main"] a')];
        const shown = links.filter((link) => link.getClientRects().length > 0);
        const cut = shown.filter((link) => link.getBoundingClientRect().right > window.innerWidth + 0.5);
        return {
          links: links.length,
          shown: shown.length,
          cut: cut.length,
          scrollWidth: document.documentElement.scrollWidth,
        };
      }, width <= 760);
      const seen = (await state.jsonValue()) as { links: number; shown: number; cut: number; scrollWidth: number };
      expect(seen.shown, `${width} px`).toBe(width <= 760 ? 0 : seen.links);
      expect(seen.cut, `${width} px`).toBe(0);
      expect(seen.scrollWidth, `${width} px`).toBeLessThanOrEqual(width);
    }
    await page.close();
  });

  it('turns table rows into labelled cards on a phone', async () => {
    const page = await openApp(PHONE, '#/sessions');
    const row = page.getByRole('row').filter({ hasText: 'agent:main:main' }).first();
    await row.waitFor();
    const cells = await row.locator('td').evaluateAll((tds) =>
      tds.map((td) => ({
        label: getComputedStyle(td, '::before').display === 'none' ? 'none' : getComputedStyle(td, '::before').content,
        display: getComputedStyle(td).display,
        right: td.getBoundingClientRect().right,
      })),
    );
    expect(cells.map((cell) => cell.label)).toEqual([
      '"Session"',
      '"Channel"',
      '"Model"',
      '"Tokens"',
      '"Updated"',
      'none',
    ]);
    for (const cell of cells) expect(cell.right).toBeLessThanOrEqual(PHONE.width);
    // The right-hand column of the desktop table, on screen and usable.
    const open = row.getByRole('link', { name: 'Open' });
    const box = (await open.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    await page.screenshot({ path: join(SHOTS, 'sessions-cards-390.png') });
    await open.click();
    await page.getByRole('heading', { name: 'Main conversation' }).waitFor();
    await page.close();
  });

  it('works from the keyboard: skip link, the menu (Enter, arrows, Escape, Tab away) and focus rings', async () => {
    // Opened afresh on a page that focuses nothing by itself (Chat focuses its composer).
    const page = await openApp(PHONE, '#/overview');
    await settled(page);
    await page.reload();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await settled(page);
    const focused = () =>
      page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        return { tag: element?.tagName.toLowerCase(), id: element?.id, text: element?.textContent?.trim() };
      });
    await page.keyboard.press('Tab');
    expect((await focused()).text).toBe('Skip to content');
    // The focus ring is visible on what the keyboard reaches.
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid');
    await page.keyboard.press('Enter');
    expect((await focused()).id).toBe('main');

    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.focus();
    await page.keyboard.press('Enter');
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    // Opening moves focus to the current page's link; arrows move between links.
    expect(await focused()).toMatchObject({ tag: 'a', text: 'Overview' });
    await page.keyboard.press('ArrowUp');
    expect(await focused()).toMatchObject({ tag: 'a', text: 'Chat' });
    await page.keyboard.press('Escape');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect((await focused()).text).toBe('Menu');

    await page.keyboard.press('Space');
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await focused()).toMatchObject({ tag: 'h1', text: 'Sessions' });

    // Tabbing past the last link leaves the menu, which closes.
    await menu.focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('End');
    await page.keyboard.press('Tab');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');

    // Chat's conversation list, folded on a phone, opens with the keyboard in it and closes with Escape.
    await page.evaluate(() => (location.hash = '#/chat'));
    await page.getByRole('heading', { name: 'Main conversation' }).waitFor();
    const conversations = page.getByRole('button', { name: 'Conversations', exact: true });
    await conversations.focus();
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => !!document.activeElement?.closest('aside#conversations'))).toBe(true);
    await page.keyboard.press('Escape');
    expect(await conversations.getAttribute('aria-expanded')).toBe('false');
    expect((await focused()).text).toBe('Conversations');
    await page.close();
  });

  it('shows a loading state while a view waits, and an error with Retry when its request fails', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    context.setDefaultTimeout(20_000);
    // Between the page and the gateway: the Sessions view's sessions.list is held, then refused once.
    let release: (() => void) | undefined;
    let refuse = true;
    await context.routeWebSocket(/.*/, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((message) => {
        const frame = JSON.parse(String(message)) as { id?: string; method?: string; params?: { limit?: number } };
        if (frame.method === 'sessions.list' && frame.params?.limit === undefined && refuse) {
          refuse = false;
          release = () =>
            ws.send(
              JSON.stringify({
                type: 'res',
                id: frame.id,
                ok: false,
                error: { code: 'UNAVAILABLE', message: 'The session store is not answering (test).' },
              }),
            );
          return;
        }
        server.send(message);
      });
      server.onMessage((message) => ws.send(message));
    });
    const page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(`routed: ${error.message}`));
    await page.goto(`${base}/#token=${TOKEN}`);
    await page.locator('.pill[data-phase="open"]').waitFor();
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.getByRole('status').filter({ hasText: 'Loading sessions…' }).waitFor();
    expect(await page.locator('.table-wrap').getAttribute('aria-busy')).toBe('true');
    await page.screenshot({ path: join(SHOTS, 'sessions-loading.png') });
    await expect.poll(() => release !== undefined).toBe(true);
    release!();
    const error = page.getByRole('alert').filter({ hasText: 'The session store is not answering (test).' });
    await error.waitFor();
    await page.screenshot({ path: join(SHOTS, 'sessions-error.png') });
    await error.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('row').filter({ hasText: 'agent:main:main' }).first().waitFor();
    expect(await error.count()).toBe(0);
    await context.close();
  });

  it('ran without script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
