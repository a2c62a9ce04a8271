/**
 * Import aliases for third-party plugins, which live outside this package (under
 * ~/.openclaw/extensions) and so cannot resolve `claw/sdk` through node_modules.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function sdkAliases(): Record<string, string> {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return {
    'claw/sdk/testing': join(here, `testing${ext}`),
    'claw/sdk/agent': join(here, 'agent', `index${ext}`),
    'claw/sdk': join(here, `index${ext}`),
  };
}
