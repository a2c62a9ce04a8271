/** Booting a kernel the way every CLI command needs it: bundled plugins, SDK aliases, warnings on stderr. */
import { fileURLToPath } from 'node:url';
import { createKernel, type Kernel, type Logger } from '../../kernel/index.js';
import { createLogger } from '../../sdk/logger.js';
import { clawKernelParts } from '../../host/kernel-options.js';
import type { Io } from './io.js';
import { writeAbove } from './progress.js';

/** dist/apps/cli → dist/plugins (or apps/cli → plugins when run from source). */
export const BUNDLED_PLUGINS_DIR = fileURLToPath(new URL('../../plugins/', import.meta.url));

export interface BootOptions {
  strictConfig?: boolean;
  logger?: Logger;
}

export function bootKernel(io: Pick<Io, 'env' | 'stderr'>, options: BootOptions = {}): Promise<Kernel> {
  return createKernel({
    env: io.env,
    ...clawKernelParts({ bundledDir: BUNDLED_PLUGINS_DIR }),
    strictConfig: options.strictConfig,
    logger: options.logger ?? commandLogger(io),
  });
}

/** What a command shows of the kernel's log: warnings and errors on stderr, and progress lines. */
export function commandLogger(io: Pick<Io, 'env' | 'stderr'>): Logger {
  return createLogger({
    level: io.env.CLAW_LOG_LEVEL === 'debug' ? 'debug' : 'info',
    sink: (record) => {
      // A command shows warnings and errors; of the info lines only progress (an npm install on first use).
      if (record.progress === true && record.level === 'info') return writeAbove(io.stderr, `${record.message}\n`);
      if (record.level === 'info' && io.env.CLAW_LOG_LEVEL !== 'debug') return;
      const scope = typeof record.plugin === 'string' ? `[${record.plugin}] ` : '';
      writeAbove(io.stderr, `${record.level}: ${scope}${record.message}\n`);
    },
  });
}
