/**
 * Import aliases for third-party plugins, which live outside this package (under
 * ~/.openclaw/extensions) and so cannot resolve `@claw-assistant/claw/sdk` through
 * node_modules. The same subpaths as the package's "exports", under the package name and
 * under the legacy `claw/…` specifiers, mapped to this installation's files.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Package subpath → module file under sdk/ (without extension). Keep in step with package.json "exports". */
export const SDK_SUBPATHS: Readonly<Record<string, string>> = {
  sdk: 'index',
  'sdk/testing': 'testing',
  'sdk/channels': 'channels/index',
  'sdk/channels/contract': 'channels/contract',
  'sdk/memory': 'memory/index',
  'sdk/memory/contract': 'memory/contract',
  'sdk/agent': 'agent/index',
  'sdk/agent/provider-contract': 'agent/provider-contract',
  'sdk/sessions': 'sessions/index',
  'sdk/services': 'services',
  'sdk/sqlite': 'sqlite',
  'sdk/exec': 'exec/index',
  'sdk/sandbox': 'sandbox/index',
  'sdk/plugin': 'plugin',
  'sdk/cli': 'cli',
  'sdk/config': 'config',
  'sdk/net': 'net/index',
  'sdk/web-search': 'web-search',
  'sdk/tts': 'tts',
};

/** The specifiers a plugin may import claw by: the npm name, and `claw` as older plugins wrote it. */
export const SDK_PACKAGE_NAMES = ['@claw-assistant/claw', 'claw'] as const;

export function sdkAliases(): Record<string, string> {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const aliases: Record<string, string> = {};
  for (const name of SDK_PACKAGE_NAMES) {
    for (const [subpath, file] of Object.entries(SDK_SUBPATHS))
      aliases[`${name}/${subpath}`] = join(here, `${file}${ext}`);
  }
  return aliases;
}
