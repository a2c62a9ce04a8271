/**
 * The node host's browser.proxy: declared only where a browser is present, and against
 * Debian's Chromium through the browser plugin's service — OpenClaw's request shape
 * ({method, path, query, body, profile}) in, {result, files?} out, profiles narrowed by
 * nodeHost.browserProxy.allowProfiles, and clear refusals for what it cannot do.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../sdk/testing.js';
import { browserProxy } from '../plugins/node-host/browser-proxy.js';
import {
  CommandRefusal,
  extraNodeCommands,
  type NodeCommandContext,
  type NodeHostExtrasConfig,
} from '../plugins/node-host/extra-commands.js';
import { startTestSite, type TestSite } from './browser-pages.js';
import { REPO } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';

describe('browser.proxy declaration', () => {
  const kernel = (options: { plugin?: boolean; browser?: Record<string, unknown>; nodeHost?: NodeHostExtrasConfig }) =>
    ({
      capabilities: { find: async () => undefined },
      plugins: () => (options.plugin === false ? [] : [{ id: 'browser', enabled: true, status: 'loaded' }]),
      config: () => ({ browser: options.browser, nodeHost: options.nodeHost }),
    }) as never;
  const declared = (options: Parameters<typeof kernel>[0]) =>
    Object.keys(extraNodeCommands({ kernel: kernel(options), stateDir: '/x' }));

  it('is declared with cap "browser" where the browser plugin is on and a Chromium is on disk', () => {
    const present = { browser: { executablePath: process.execPath } };
    const commands = extraNodeCommands({ kernel: kernel(present), stateDir: '/x' });
    expect(Object.keys(commands)).toEqual(['browser.proxy']);
    expect(commands['browser.proxy']!.cap).toBe('browser');
    expect(declared({ ...present, plugin: false })).toEqual([]);
    expect(declared({ browser: { ...present.browser, enabled: false } })).toEqual([]);
    expect(declared({ ...present, nodeHost: { browserProxy: { enabled: false } } })).toEqual([]);
    expect(declared({ browser: { executablePath: '/nonexistent/chromium' } })).toEqual([]);
  });
});

describe.skipIf(!existsSync(CHROMIUM))('browser.proxy against Chromium', () => {
  let site: TestSite;
  let kernel: TestKernel;
  const call = (params: unknown, config: NodeHostExtrasConfig = {}) => {
    const ctx: NodeCommandContext = { signal: new AbortController().signal, stateDir: kernel.stateDir, config };
    return browserProxy(kernel.plugins.kernelServices)(params, ctx) as Promise<Record<string, any>>;
  };

  beforeAll(async () => {
    site = await startTestSite();
    kernel = await createTestKernel({
      plugins: [join(REPO, 'plugins', 'browser')],
      config: { browser: { ssrfPolicy: { allowedHostnames: ['127.0.0.1'] } } },
    });
    await kernel.start();
  }, 60_000);

  afterAll(async () => {
    await kernel?.dispose();
    await site?.close();
  });

  it('serves the control routes and returns the files they leave', async () => {
    const status = await call({ method: 'GET', path: '/' });
    expect(status.result).toMatchObject({ enabled: true, profile: 'openclaw', running: false });

    const navigated = await call({ method: 'POST', path: 'navigate', body: { url: `${site.base}/page` } });
    expect(navigated.result).toMatchObject({ ok: true, title: 'Test page' });
    expect(navigated.result.snapshot).toContain('button "Go"');
    expect(navigated.files).toBeUndefined();

    const tabs = await call({ path: '/tabs', profile: 'openclaw' });
    expect(tabs.result.tabs).toEqual([expect.objectContaining({ title: 'Test page' })]);

    const shot = await call(
      { method: 'POST', path: '/screenshot', body: {} },
      { browserProxy: { allowProfiles: ['openclaw'] } },
    );
    expect(shot.result).toMatchObject({ ok: true, mimeType: 'image/png' });
    expect(shot.files).toEqual([{ path: shot.result.path, mimeType: 'image/png', base64: expect.any(String) }]);
    expect(Buffer.from(shot.files[0].base64, 'base64').subarray(1, 4).toString()).toBe('PNG');
  }, 120_000);

  it('narrows profiles to allowProfiles and refuses what it cannot do, clearly', async () => {
    const only = { browserProxy: { allowProfiles: ['work'] } };
    await expect(call({ path: '/tabs' }, only)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('browser profile "openclaw" is not allowed'),
    });
    expect((await call({ path: '/profiles' }, only)).result.profiles).toEqual([]);
    expect((await call({ path: '/profiles' })).result.profiles).toEqual([
      expect.objectContaining({ name: 'openclaw' }),
    ]);

    const refused = async (params: unknown, code: string, text: string, config?: NodeHostExtrasConfig) => {
      const error = await call(params, config).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(CommandRefusal);
      expect(error).toMatchObject({ code, message: expect.stringContaining(text) });
    };
    await refused({ path: '/cookies' }, 'INVALID_REQUEST', 'no browser route GET /cookies');
    await refused({ method: 'PUT', path: '/tabs' }, 'INVALID_REQUEST', 'must be GET, POST or DELETE');
    await refused({ method: 'POST', path: '/profiles/create', body: { name: 'x' } }, 'INVALID_REQUEST', 'persistent');
    await refused({}, 'INVALID_REQUEST', 'needs path');
    await refused({ path: '/tabs', upload: {} }, 'INVALID_REQUEST', 'uploads');
    await refused({ path: '/tabs' }, 'UNAVAILABLE', 'nodeHost.browserProxy.enabled', {
      browserProxy: { enabled: false },
    });
    await refused({ path: '/tabs', profile: 'nope' }, 'INVALID_REQUEST', 'unknown browser profile "nope"');
    await call({ method: 'POST', path: '/stop' });
  }, 120_000);
});
