/**
 * OpenClaw's own Control UI (the openclaw npm package's dist/control-ui, served by claw at
 * `gateway.controlUi.root`) in headless Chromium: every tab its navigation offers loads with
 * no console error, no page error, no failed HTTP request and no gateway answer with ok:false;
 * chat history is there again after a reload; the Devices page's device-token connection works.
 */
import { createRequire } from 'node:module';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startFakeLlm, type FakeLlm } from './fakes/llm-server.js';
import { CLI, REPO, tempDir } from './helpers.js';
import { spawnCliGateway, type CliGateway } from './cli-gateway.js';

const CONTROL_UI = join(REPO, '.cache', 'openclaw', 'node_modules', 'openclaw', 'dist', 'control-ui');
const TOKEN = 'control-ui-token-0123456789abcdef';
const REPLY = 'Hello from the fake model.';

let fake: FakeLlm;
let gw: CliGateway;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CONTROL_UI))
    throw new Error('OpenClaw is not installed for the compatibility suite: run node scripts/install-openclaw.mjs');
  fake = await startFakeLlm();
  fake.respond(() => ({ text: REPLY }));
  const stateDir = tempDir('claw-control-ui-');
  writeFileSync(
    join(stateDir, 'openclaw.json'),
    JSON.stringify({
      gateway: { auth: { mode: 'token', token: TOKEN }, controlUi: { root: CONTROL_UI } },
      agents: { defaults: { model: 'openai/gpt-4.1' } },
      models: { providers: { openai: { baseUrl: fake.openaiBaseUrl, apiKey: 'sk-control-ui' } } },
    }),
  );
  gw = await spawnCliGateway(CLI, { OPENCLAW_STATE_DIR: stateDir });
  const { chromium } = createRequire(import.meta.url)('playwright-core') as typeof import('playwright-core');
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  gw?.child.kill();
  await gw?.exited;
  await fake?.close();
});

interface Answer {
  method: string;
  ok?: boolean;
  error?: { code?: string; message?: string };
  payload?: any;
}

/**
 * Everything the page does that can go wrong, filed under the tab that was showing, and the
 * requests (HTTP and gateway) still waiting for an answer — the tab has settled when none are.
 */
class Watch {
  tab = 'start';
  problems = new Map<string, string[]>();
  answers = new Map<string, Answer>();
  /** The `auth` of every connect the page sent. */
  connectAuth: unknown[] = [];
  private pendingHttp = new Set<object>();
  private pendingRpc = new Set<string>();

  constructor(readonly page: Page) {
    page.on('console', (message) => {
      if (message.type() === 'error') this.note(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => this.note(`page error: ${error.message}`));
    page.on('request', (request) => this.pendingHttp.add(request));
    page.on('requestfinished', async (request) => {
      this.pendingHttp.delete(request);
      const response = await request.response();
      if (response && response.status() >= 400) this.note(`HTTP ${response.status()} ${request.url()}`);
    });
    page.on('requestfailed', (request) => {
      this.pendingHttp.delete(request);
      this.note(`HTTP failed ${request.url()}: ${request.failure()?.errorText}`);
    });
    page.on('websocket', (socket) => {
      socket.on('framesent', ({ payload }) => {
        const frame = JSON.parse(String(payload));
        if (frame.type !== 'req') return;
        if (frame.method === 'connect') this.connectAuth.push(frame.params?.auth);
        this.answers.set(frame.id, { method: frame.method });
        this.pendingRpc.add(frame.id);
      });
      socket.on('framereceived', ({ payload }) => {
        const frame = JSON.parse(String(payload));
        const answer = frame.type === 'res' ? this.answers.get(frame.id) : undefined;
        if (!answer) return;
        this.pendingRpc.delete(frame.id);
        Object.assign(answer, { ok: frame.ok, payload: frame.payload, error: frame.error });
        if (!frame.ok) this.note(`${answer.method} → ok:false ${frame.error?.code}: ${frame.error?.message}`);
      });
      // A socket that closes leaves its requests unanswered for good.
      socket.on('close', () => this.pendingRpc.clear());
    });
  }

  note(problem: string): void {
    const list = this.problems.get(this.tab) ?? [];
    list.push(problem);
    this.problems.set(this.tab, list);
  }

  pending(): number {
    return this.pendingHttp.size + this.pendingRpc.size;
  }

  answered(method: string): Answer[] {
    return [...this.answers.values()].filter((answer) => answer.method === method && answer.ok !== undefined);
  }

  /**
   * Settled: nothing pending, and still nothing pending after the browser has been idle (its
   * idle callback runs once rendering and queued tasks are done, so a request a render starts
   * is seen before the check repeats).
   */
  async settle(timeout = 30_000): Promise<void> {
    const deadline = Date.now() + timeout;
    for (;;) {
      const idle = () =>
        this.page.evaluate(
          () => new Promise<void>((resolve) => requestIdleCallback(() => resolve(), { timeout: 2000 })),
        );
      await idle();
      if (this.pending() === 0) {
        await idle();
        if (this.pending() === 0) return;
      }
      if (Date.now() > deadline) {
        this.note(`still waiting for ${this.pending()} requests after ${timeout} ms`);
        return;
      }
    }
  }

  report(): string {
    return [...this.problems].map(([tab, list]) => `${tab}:\n  ${[...new Set(list)].join('\n  ')}`).join('\n');
  }
}

async function openUi(context?: BrowserContext, path = '/openclaw/', withToken = true): Promise<Watch> {
  const page = await (context ?? (await browser.newContext())).newPage();
  const watch = new Watch(page);
  await page.goto(`http://127.0.0.1:${gw.port}${path}${withToken ? `#token=${TOKEN}` : ''}`);
  await expect
    .poll(() => watch.answered('connect').some((answer) => answer.ok), { timeout: 30_000, message: watch.report() })
    .toBe(true);
  await watch.settle();
  return watch;
}

/** The UI's own links to its pages (chat sessions aside: those are conversations, not tabs). */
function tabLinks(page: Page): Promise<string[]> {
  return page
    .locator('a[href^="/openclaw/"]')
    .evaluateAll((anchors) => [...new Set(anchors.map((anchor) => anchor.getAttribute('href') ?? ''))])
    .then((links) => links.filter((href) => !href.startsWith('/openclaw/chat/') || href === '/openclaw/chat/main'));
}

describe('OpenClaw’s Control UI served by claw', () => {
  it('serves a deep link as the page with its asset links anchored at the base path', async () => {
    const base = `http://127.0.0.1:${gw.port}`;
    const page = await fetch(`${base}/openclaw/settings/devices`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('data-openclaw-control-ui-base-path="/openclaw"');
    expect(html).toContain('data-openclaw-terminal-enabled="false"');
    expect(html).toContain('href="/openclaw/favicon.svg"');
    expect(html).not.toMatch(/(?:src|href)="\.\/assets\//);
    const script = /src="(\/openclaw\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    expect((await fetch(`${base}${script}`)).headers.get('content-type')).toMatch(/javascript/);
    // A page loaded before the rewrite (or a relative import from a nested route) still finds its assets.
    const nested = await fetch(`${base}/openclaw/settings/${script.slice('/openclaw/'.length)}`);
    expect(nested.status).toBe(200);
    expect(nested.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${base}/openclaw/assets/no-such-file.js`)).status).toBe(404);
  });

  it('loads every tab its navigation offers with no errors and no failed requests', async () => {
    const watch = await openUi();
    const { page } = watch;
    try {
      // The sidebar links the main pages; Settings has a sidebar of its own, reached from them.
      const tabs = await tabLinks(page);
      for (let next = 0; next < tabs.length; next++) {
        const href = tabs[next]!;
        watch.tab = href;
        const link = page.locator(`a[href="${href}"] >> visible=true`).first();
        if (await link.count()) await link.click();
        else await page.goto(`http://127.0.0.1:${gw.port}${href}`);
        // Some links carry a query (/openclaw/new?agent=main): the page is their path.
        const path = new URL(href, 'http://ui').pathname;
        await page
          .waitForURL((url) => url.pathname === path, { timeout: 15_000 })
          .catch((error: Error) => {
            throw new Error(`the ${href} link led to ${new URL(page.url()).pathname}: ${error.message}`);
          });
        await watch.settle();
        for (const found of await tabLinks(page)) if (!tabs.includes(found)) tabs.push(found);
      }
      expect(tabs.length, `tabs: ${tabs.join(' ')}`).toBeGreaterThanOrEqual(16);
      const failing = [...watch.problems.keys()].filter((tab) => tab !== 'start');
      console.log(`Control UI: ${tabs.length - failing.length} of ${tabs.length} tabs load without errors`);
      expect(
        watch.problems.size,
        `tabs with problems (${watch.problems.size} of ${tabs.length}):\n${watch.report()}`,
      ).toBe(0);
    } finally {
      await page.close();
    }
  }, 600_000);

  it('shows the chat history again after a reload', async () => {
    const watch = await openUi();
    const { page } = watch;
    try {
      watch.tab = 'chat';
      const composer = page.getByPlaceholder(/Message/).first();
      await composer.waitFor({ timeout: 30_000 });
      await composer.click();
      await page.keyboard.type('remember this line', { delay: 10 });
      await page.keyboard.press('Enter');
      await expect.poll(async () => page.getByText(REPLY).count(), { timeout: 30_000 }).toBeGreaterThan(0);
      await watch.settle();
      watch.tab = 'chat after reload';
      await page.reload();
      await page.getByText('remember this line').first().waitFor({ timeout: 30_000 });
      await page.getByText(REPLY).first().waitFor({ timeout: 30_000 });
      await watch.settle();
      expect(watch.problems.size, watch.report()).toBe(0);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('connects a second tab with the device token the first was issued, and lists the device on the Devices page', async () => {
    const context = await browser.newContext();
    try {
      const first = await openUi(context);
      const hello = first.answered('connect').find((answer) => answer.ok)!;
      const issued: string = hello.payload.auth.deviceToken;
      expect(issued, 'hello-ok carries a device token for a newly paired browser').toMatch(/^[A-Za-z0-9_-]{40,}$/);
      // No shared secret this time: the page has only what the first tab stored.
      const second = await openUi(context, '/openclaw/settings/devices', false);
      const connect = second.answered('connect').find((answer) => answer.ok)!;
      expect(connect.payload.auth.role).toBe('operator');
      expect(second.connectAuth.at(-1)).toEqual({ deviceToken: issued });
      const listed = second.answered('device.pair.list').at(-1)?.payload;
      const device = listed?.paired?.find(
        (row: { tokens?: unknown[]; connected?: boolean }) => Array.isArray(row.tokens) && row.connected,
      );
      expect(device, JSON.stringify(listed)).toMatchObject({
        roles: ['operator'],
        connected: true,
        tokens: [{ role: 'operator', createdAtMs: expect.any(Number) }],
      });
      await second.page
        .getByText(/openclaw-control-ui/i)
        .first()
        .waitFor({ timeout: 15_000 });
      expect(second.problems.get('start') ?? [], second.report()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
