/** Booting a kernel the way every CLI command needs it: bundled plugins, SDK aliases, warnings on stderr. */
import { fileURLToPath } from 'node:url';
import { createKernel, createLogger, type Kernel } from '../../kernel/index.js';
import { sdkAliases } from '../../sdk/aliases.js';
import type { Io } from './io.js';

/** dist/apps/cli → dist/plugins (or apps/cli → plugins when run from source). */
export const BUNDLED_PLUGINS_DIR = fileURLToPath(new URL('../../plugins/', import.meta.url));

export function bootKernel(io: Io, options: { strictConfig?: boolean } = {}): Promise<Kernel> {
  return createKernel({
    env: io.env,
    bundledDir: BUNDLED_PLUGINS_DIR,
    moduleAliases: sdkAliases(),
    strictConfig: options.strictConfig,
    logger: createLogger({
      level: io.env.CLAW_LOG_LEVEL === 'debug' ? 'debug' : 'warn',
      sink: (record) => {
        const scope = typeof record.plugin === 'string' ? `[${record.plugin}] ` : '';
        io.stderr.write(`${record.level}: ${scope}${record.message}\n`);
      },
    }),
  });
}
