/**
 * The browser service: one ProfileRuntime per profile (and a separate, strict one per
 * profile for sandboxed sessions), and the operations the tool, `browser.request` and
 * `claw browser` share. Files (screenshots, PDFs, labelled snapshots) go to
 * <stateDir>/media/browser, owner-only, written atomically.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { writeFileAtomicAsync, type Logger, type RuntimeDeps } from '../../sdk/index.js';
import type { GuardedNet } from '../../sdk/net/index.js';
import { act, BrowserInputError, normalizeRef, type ActRequest } from './actions.js';
import { urlCheck } from './policy.js';
import { ProfileRuntime } from './runtime.js';
import { profileNames, profileSettings, type BrowserSection } from './settings.js';
import { snapshotPage, type SnapshotOptions } from './snapshot.js';

export interface Caller {
  profile?: string;
  /** A sandboxed session: its own browser, public addresses only. */
  sandboxed?: boolean;
}

export interface SavedFile {
  path: string;
  mimeType: string;
  bytes: number;
}

export interface ScreenshotRequest {
  targetId?: string;
  fullPage?: boolean;
  ref?: string;
  element?: string;
  type?: 'png' | 'jpeg';
}

export class BrowserService {
  private readonly runtimes = new Map<string, ProfileRuntime>();
  readonly mediaDir: string;

  constructor(
    private readonly section: () => BrowserSection,
    private readonly stateDir: string,
    private readonly logger: Logger,
    private readonly deps: RuntimeDeps,
    private readonly net: GuardedNet,
  ) {
    this.mediaDir = join(stateDir, 'media', 'browser');
  }

  private enabled(): BrowserSection {
    const section = this.section();
    if (!section.enabled) throw new BrowserInputError('the browser is disabled (browser.enabled is false)');
    return section;
  }

  runtime(caller: Caller = {}): ProfileRuntime {
    const section = this.enabled();
    const name = caller.profile ?? section.defaultProfile;
    const key = caller.sandboxed ? `${name}#sandbox` : name;
    let runtime = this.runtimes.get(key);
    if (!runtime) {
      const settings = profileSettings(section, name, this.stateDir);
      runtime = new ProfileRuntime({
        settings: caller.sandboxed
          ? {
              ...settings,
              name: `${name} (sandboxed sessions)`,
              userDataDir: join(this.stateDir, 'browser', name, 'sandbox-user-data'),
            }
          : settings,
        check: urlCheck(this.net, section.ssrfPolicy ?? {}, caller.sandboxed === true),
        idleTimeoutMs: section.idleTimeoutMs,
        logger: this.logger,
        deps: this.deps,
      });
      this.runtimes.set(key, runtime);
    }
    return runtime;
  }

  /** Status without launching anything. */
  status(caller: Caller = {}): Record<string, unknown> {
    const section = this.section();
    if (!section.enabled) return { enabled: false };
    return { enabled: true, ...this.runtime(caller).status() };
  }

  profiles(): Array<{ name: string; running: boolean; default: boolean }> {
    const section = this.section();
    return profileNames(section).map((name) => ({
      name,
      running: this.runtimes.get(name)?.running === true,
      default: name === section.defaultProfile,
    }));
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.runtimes.values()].map((runtime) => runtime.stop().catch(() => false)));
  }

  async save(data: Buffer, extension: 'png' | 'jpeg' | 'pdf'): Promise<SavedFile> {
    mkdirSync(this.mediaDir, { recursive: true, mode: 0o700 });
    const path = join(
      this.mediaDir,
      `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}.${extension === 'jpeg' ? 'jpg' : extension}`,
    );
    await writeFileAtomicAsync(path, data, { mode: 0o600 });
    return { path, mimeType: extension === 'pdf' ? 'application/pdf' : `image/${extension}`, bytes: data.length };
  }

  /** Goes to `url` and, as OpenClaw does, returns the page's interactive snapshot with it (one call instead of two). */
  async navigate(
    caller: Caller,
    url: string,
    targetId?: string,
  ): Promise<{ targetId: string; url: string; title: string; snapshot: string }> {
    const runtime = this.runtime(caller);
    await runtime.preflight(url);
    const tab = await runtime.tab(targetId);
    await runtime.navigate(tab.page, url);
    const { snapshot } = await snapshotPage(tab.page, { interactive: true, maxChars: 20_000 });
    return { targetId: tab.id, url: tab.page.url(), title: await tab.page.title(), snapshot };
  }

  async snapshot(caller: Caller, options: SnapshotOptions & { targetId?: string }): Promise<Record<string, unknown>> {
    if (options.depth !== undefined && (!Number.isInteger(options.depth) || options.depth < 0))
      throw new BrowserInputError(`depth must be a whole number >= 0, got ${options.depth}`);
    const tab = await this.runtime(caller).tab(options.targetId);
    const shot = await snapshotPage(tab.page, options);
    const { labeled, ...rest } = shot;
    const out: Record<string, unknown> = {
      targetId: tab.id,
      url: tab.page.url(),
      title: await tab.page.title(),
      ...rest,
    };
    if (labeled) out.labels = { ...(await this.save(labeled.png, 'png')), annotations: labeled.annotations };
    return out;
  }

  async screenshot(caller: Caller, request: ScreenshotRequest): Promise<SavedFile & { targetId: string; url: string }> {
    if (request.fullPage && (request.ref || request.element))
      throw new BrowserInputError('fullPage is for page captures only; it cannot be combined with ref or element');
    const type = request.type ?? 'png';
    if (type !== 'png' && type !== 'jpeg') throw new BrowserInputError(`type must be png or jpeg, got "${type}"`);
    const tab = await this.runtime(caller).tab(request.targetId);
    const page: Page = tab.page;
    const data = request.ref
      ? await page.locator(`aria-ref=${normalizeRef(request.ref)}`).screenshot({ type, timeout: 20_000 })
      : request.element
        ? await page.locator(request.element).first().screenshot({ type, timeout: 20_000 })
        : await page.screenshot({ type, fullPage: request.fullPage === true, timeout: 20_000 });
    return { ...(await this.save(data, type)), targetId: tab.id, url: page.url() };
  }

  async pdf(caller: Caller, targetId?: string): Promise<SavedFile & { targetId: string; url: string }> {
    const runtime = this.runtime(caller);
    const tab = await runtime.tab(targetId);
    const data = await tab.page.pdf({ printBackground: true }).catch((error: Error) => {
      throw new BrowserInputError(
        /headless/i.test(error.message)
          ? "PDF export needs a headless browser (browser.headless or the profile's headless)"
          : error.message,
      );
    });
    return { ...(await this.save(data, 'pdf')), targetId: tab.id, url: tab.page.url() };
  }

  async act(caller: Caller, request: ActRequest & { targetId?: string }): Promise<Record<string, unknown>> {
    const section = this.enabled();
    const tab = await this.runtime(caller).tab(request.targetId);
    const result = await act(tab.page, request, section.evaluateEnabled);
    return { ok: true, kind: request.kind, targetId: tab.id, url: tab.page.url(), ...result };
  }
}
