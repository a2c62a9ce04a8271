/**
 * playwright-core, imported the first time a browser is launched (never by a gateway that
 * does not use one) and installed on demand when claw was installed without it.
 */
import type { BrowserType } from 'playwright-core';
import type { RuntimeDependency, RuntimeDeps } from '../../sdk/index.js';

/** Same entry as the manifest's `runtimeDependencies` (test/browser-units.test.ts keeps them equal). */
export const PLAYWRIGHT_CORE: RuntimeDependency = { name: 'playwright-core', version: '^1.65.0', approxSizeMb: 14 };

export async function loadChromium(deps: RuntimeDeps): Promise<BrowserType> {
  const mod = await deps.import<{ chromium?: BrowserType; default?: { chromium?: BrowserType } }>(PLAYWRIGHT_CORE, {
    retryCommand: 'claw plugins enable browser',
  });
  const chromium = mod.chromium ?? mod.default?.chromium;
  if (!chromium) throw new Error('playwright-core did not export chromium');
  return chromium;
}
