/**
 * One managed profile's browser: launched on first use (persistent user data dir under the
 * state dir, 0700), every request through the SSRF proxy, tabs with stable ids (t1, t2, …)
 * and labels, closed after `idleTimeoutMs` without a call or when the gateway stops.
 */
import { chmodSync, mkdirSync } from 'node:fs';
import type { BrowserContext, Page, Route } from 'playwright-core';
import type { Logger, RuntimeDeps } from '../../sdk/index.js';
import { BrowserInputError } from './actions.js';
import { loadChromium } from './playwright.js';
import type { UrlCheck } from './policy.js';
import { startPolicyProxy, type BlockedRequest, type PolicyProxy } from './proxy.js';
import type { ProfileSettings } from './settings.js';

export interface TabInfo {
  suggestedTargetId: string;
  tabId: string;
  targetId: string;
  label?: string;
  url: string;
  title: string;
  active: boolean;
}

export interface RuntimeOptions {
  settings: ProfileSettings;
  check: UrlCheck;
  idleTimeoutMs: number;
  logger: Logger;
  deps: RuntimeDeps;
  /** Called once the browser has closed (idle, stop or a crash). */
  onClosed?: () => void;
}

interface Tab {
  id: string;
  page: Page;
  label?: string;
}

/** Schemes a page may load without the network (no proxy involved). */
const LOCAL_SCHEMES = new Set(['data:', 'blob:', 'about:']);

export class ProfileRuntime {
  private context: BrowserContext | undefined;
  private proxy: PolicyProxy | undefined;
  private starting: Promise<BrowserContext> | undefined;
  private stopping: Promise<boolean> | undefined;
  private inFlight = 0;
  private readonly tabs = new Map<string, Tab>();
  private nextTab = 1;
  private activeTab: string | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private startedAt: number | undefined;
  lastUsedAt = 0;

  constructor(private readonly options: RuntimeOptions) {}

  get name(): string {
    return this.options.settings.name;
  }

  get running(): boolean {
    return this.context !== undefined;
  }

  status(): Record<string, unknown> {
    const { settings } = this.options;
    return {
      profile: settings.name,
      running: this.running,
      headless: settings.headless,
      executablePath: settings.executablePath,
      userDataDir: settings.userDataDir,
      tabs: this.tabs.size,
      ...(this.startedAt ? { startedAt: this.startedAt } : {}),
      ...(this.lastUsedAt ? { lastUsedAt: this.lastUsedAt } : {}),
      idleTimeoutMs: this.options.idleTimeoutMs,
      blocked: this.proxy?.blocked.slice(-10) ?? [],
    };
  }

  /** Recent requests the SSRF policy refused. */
  blocked(): BlockedRequest[] {
    return this.proxy?.blocked ?? [];
  }

  /** Runs one call; the idle clock stops while any call runs and starts again when the last ends. */
  async using<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight++;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    try {
      return await work();
    } finally {
      this.inFlight--;
      this.touch();
    }
  }

  /** Marks use: the idle clock starts again (unless a call is still running). */
  private touch(): void {
    this.lastUsedAt = Date.now();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.options.idleTimeoutMs > 0 && this.context && this.inFlight === 0) {
      this.idleTimer = setTimeout(() => {
        this.options.logger.info(`browser profile ${this.name} idle for ${this.options.idleTimeoutMs} ms: closing it`);
        void this.stop();
      }, this.options.idleTimeoutMs);
      this.idleTimer.unref();
    }
  }

  async start(): Promise<BrowserContext> {
    // A call that arrives while an idle stop is closing the browser waits and launches anew.
    if (this.stopping) await this.stopping;
    if (this.context) {
      this.touch();
      return this.context;
    }
    this.starting ??= this.launch().finally(() => (this.starting = undefined));
    const context = await this.starting;
    this.touch();
    return context;
  }

  private async launch(): Promise<BrowserContext> {
    const { settings, check, deps } = this.options;
    mkdirSync(settings.userDataDir, { recursive: true, mode: 0o700 });
    chmodSync(settings.userDataDir, 0o700);
    const chromium = await loadChromium(deps);
    const proxy = await startPolicyProxy(check);
    let context: BrowserContext;
    try {
      context = await chromium.launchPersistentContext(settings.userDataDir, {
        executablePath: settings.executablePath,
        headless: settings.headless,
        args: settings.args,
        // Loopback is not bypassed (Playwright adds <-loopback>): 127.0.0.1 passes the policy too.
        proxy: { server: proxy.server, username: proxy.username, password: proxy.password },
        viewport: { width: 1280, height: 720 },
        acceptDownloads: false,
        timeout: 30_000,
      });
    } catch (error) {
      await proxy.close();
      throw error;
    }
    // Schemes the proxy never sees (file:, chrome:, ftp:…) are refused here; http(s) is
    // the proxy's to judge, with the one DNS answer it connects to.
    await context.route('**/*', (route: Route) => {
      const url = route.request().url();
      const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase() ?? '';
      if (scheme === 'http:' || scheme === 'https:' || LOCAL_SCHEMES.has(scheme)) return route.fallback();
      proxy.blocked.push({ url, reason: `the ${scheme} scheme is not allowed`, at: Date.now() });
      return route.abort('blockedbyclient');
    });
    this.proxy = proxy;
    this.context = context;
    this.startedAt = Date.now();
    for (const page of context.pages()) this.adopt(page);
    context.on('page', (page) => this.adopt(page));
    // A crash or an outside close; a stop() does its own bookkeeping once the process is gone.
    context.on('close', () => void (this.stopping ? undefined : this.closed()));
    this.options.logger.info(
      `browser profile ${settings.name} started (${settings.headless ? 'headless' : 'headed'}, ${settings.executablePath})`,
    );
    return context;
  }

  private adopt(page: Page): Tab {
    const existing = [...this.tabs.values()].find((tab) => tab.page === page);
    if (existing) return existing;
    const tab: Tab = { id: `t${this.nextTab++}`, page };
    this.tabs.set(tab.id, tab);
    this.activeTab ??= tab.id;
    page.on('close', () => {
      this.tabs.delete(tab.id);
      if (this.activeTab === tab.id) this.activeTab = [...this.tabs.keys()].pop();
    });
    return tab;
  }

  private async closed(): Promise<void> {
    if (!this.context) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.context = undefined;
    this.tabs.clear();
    this.activeTab = undefined;
    this.nextTab = 1;
    this.startedAt = undefined;
    const proxy = this.proxy;
    this.proxy = undefined;
    await proxy?.close();
    this.options.onClosed?.();
  }

  /** Closes the browser and waits until its processes have exited (the user data dir is then quiet). */
  async stop(): Promise<boolean> {
    if (this.starting) await this.starting.catch(() => undefined);
    if (this.stopping) return this.stopping;
    const context = this.context;
    if (!context) return false;
    this.stopping = (async () => {
      await context.close().catch(() => undefined);
      await this.closed();
      return true;
    })().finally(() => (this.stopping = undefined));
    return this.stopping;
  }

  private info(tab: Tab, title: string): TabInfo {
    return {
      suggestedTargetId: tab.label ?? tab.id,
      tabId: tab.id,
      targetId: tab.id,
      ...(tab.label ? { label: tab.label } : {}),
      url: tab.page.url(),
      title,
      active: tab.id === this.activeTab,
    };
  }

  async listTabs(): Promise<TabInfo[]> {
    await this.start();
    return Promise.all(
      [...this.tabs.values()].map(async (tab) => this.info(tab, await tab.page.title().catch(() => ''))),
    );
  }

  /** A tab by id or label; the active tab when none is named (one is opened if there is none). */
  async tab(targetId?: string): Promise<{ id: string; page: Page }> {
    const context = await this.start();
    if (targetId) {
      const tab = this.tabs.get(targetId) ?? [...this.tabs.values()].find((candidate) => candidate.label === targetId);
      if (!tab)
        throw new BrowserInputError(
          `no tab "${targetId}" in profile ${this.name} (tabs: ${[...this.tabs.keys()].join(', ') || 'none'})`,
        );
      return tab;
    }
    const active = this.activeTab ? this.tabs.get(this.activeTab) : undefined;
    if (active) return active;
    const tab = this.adopt(await context.newPage());
    this.activeTab = tab.id;
    return tab;
  }

  async open(url: string, label?: string): Promise<TabInfo> {
    await this.preflight(url);
    const context = await this.start();
    if (label && [...this.tabs.values()].some((tab) => tab.label === label))
      throw new BrowserInputError(`a tab is already labelled "${label}"`);
    // The blank page Chromium starts with is used for the first tab instead of a second one.
    const blank =
      this.tabs.size === 1
        ? [...this.tabs.values()].find((candidate) => candidate.page.url() === 'about:blank' && !candidate.label)
        : undefined;
    const tab = blank ?? this.adopt(await context.newPage());
    if (label) tab.label = label;
    this.activeTab = tab.id;
    await this.navigate(tab.page, url);
    return this.info(tab, await tab.page.title().catch(() => ''));
  }

  async focus(targetId: string): Promise<TabInfo> {
    const tab = await this.tab(targetId);
    this.activeTab = tab.id;
    await tab.page.bringToFront();
    return this.info(this.tabs.get(tab.id)!, await tab.page.title().catch(() => ''));
  }

  async close(targetId?: string): Promise<string> {
    const tab = await this.tab(targetId);
    await tab.page.close();
    return tab.id;
  }

  /** The URL, parsed and checked against the policy (before anything launches). */
  async preflight(url: string): Promise<URL> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new BrowserInputError(`"${url}" is not an absolute URL (such as https://example.com)`);
    }
    if (parsed.href !== 'about:blank') {
      const verdict = await this.options.check(parsed);
      if ('refused' in verdict) throw new BrowserInputError(`navigation blocked: ${verdict.refused}`);
    }
    return parsed;
  }

  /**
   * Go to `url`, checked first so a refusal is a clear error (the proxy would refuse the
   * request anyway, with the answer Chromium shows as a blank error page).
   */
  async navigate(page: Page, url: string): Promise<void> {
    const parsed = await this.preflight(url);
    this.touch();
    const since = Date.now();
    const blockedSince = () => this.proxy?.blocked.filter((entry) => entry.at >= since).at(-1)?.reason;
    let response;
    try {
      response = await page.goto(parsed.href, { waitUntil: 'load', timeout: 30_000 });
    } catch (error) {
      // An HTTPS hop the proxy refused surfaces as a tunnel error: say why instead.
      const reason = blockedSince();
      if (reason) throw new BrowserInputError(`navigation blocked: ${reason}`);
      throw error;
    }
    const blocked = response?.headers()['x-claw-browser-blocked'];
    if (blocked) throw new BrowserInputError(`navigation blocked: ${decodeURIComponent(blocked)}`);
  }
}
