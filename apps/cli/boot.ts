/** Booting a kernel the way every CLI command needs it: bundled plugins, SDK aliases, warnings on stderr. */
import { fileURLToPath } from 'node:url';
import { createKernel, readConfigFile, resolveConfigPath, type Kernel, type Logger } from '../../kernel/index.js';
import { createLogger } from '../../sdk/logger.js';
import { clawKernelParts } from '../../host/kernel-options.js';
import type { Io } from './io.js';
import { writeAbove } from './progress.js';

/** dist/apps/cli → dist/plugins (or apps/cli → plugins when run from source). */
export const BUNDLED_PLUGINS_DIR = fileURLToPath(new URL('../../plugins/', import.meta.url));

export interface BootOptions {
  strictConfig?: boolean;
  logger?: Logger;
  /** Deep-merged over the config file (command-line flags of long-running commands). */
  configOverlay?: Record<string, unknown>;
}

export function bootKernel(io: Pick<Io, 'env' | 'stderr'>, options: BootOptions = {}): Promise<Kernel> {
  let overlay: { config: Record<string, unknown>; configPath: string } | undefined;
  if (options.configOverlay) {
    const configPath = resolveConfigPath(io.env);
    const file = readConfigFile(configPath, io.env);
    // A broken file is reported by the boot below, exactly as without an overlay.
    overlay = file.issues.some((issue) => issue.path === '<file>')
      ? undefined
      : { config: deepMerge(file.raw, options.configOverlay), configPath };
  }
  return createKernel({
    env: io.env,
    ...overlay,
    ...clawKernelParts({ bundledDir: BUNDLED_PLUGINS_DIR }),
    strictConfig: options.strictConfig,
    logger:
      options.logger ??
      createLogger({
        level: io.env.CLAW_LOG_LEVEL === 'debug' ? 'debug' : 'info',
        sink: (record) => {
          // A command shows warnings and errors; of the info lines only progress (an npm install on first use).
          if (record.progress === true && record.level === 'info') return writeAbove(io.stderr, `${record.message}\n`);
          if (record.level === 'info' && io.env.CLAW_LOG_LEVEL !== 'debug') return;
          const scope = typeof record.plugin === 'string' ? `[${record.plugin}] ` : '';
          writeAbove(io.stderr, `${record.level}: ${scope}${record.message}\n`);
        },
      }),
  });
}

/** Objects merge key by key; anything else in `over` replaces what is in `base`. */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const current = out[key];
    const bothObjects = [current, value].every((v) => v !== null && typeof v === 'object' && !Array.isArray(v));
    out[key] = bothObjects ? deepMerge(current as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return out;
}
