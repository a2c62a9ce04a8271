/**
 * The one way CLI commands change openclaw.json: holding the config lock (so concurrent
 * writers queue instead of losing each other's changes), edit a copy of the raw config,
 * boot a kernel against the result to validate it (kernel schema and every enabled
 * plugin), refuse if the edit introduces a config error, then write atomically.
 */
import {
  createKernel,
  formatIssue,
  resolveConfigPath,
  silentLogger,
  type ConfigIssue,
  type Kernel,
} from '../../kernel/index.js';
import { clawKernelParts } from '../../host/kernel-options.js';
import { withConfigLock, writeConfigFile } from '../../host/config-write.js';
import { BUNDLED_PLUGINS_DIR, bootKernel } from './boot.js';
import { CliError, type Io } from './io.js';

export interface EditResult<T> {
  value: T;
  before: Kernel;
  after: Kernel;
}

const key = (issue: ConfigIssue) => `${issue.path}\u0000${issue.message}`;

export function errorsOf(kernel: Kernel): ConfigIssue[] {
  return kernel.issues().filter((issue) => issue.level === 'error');
}

export async function editConfig<T>(
  io: Io,
  edit: (raw: Record<string, unknown>, kernel: Kernel) => T | Promise<T>,
  options: {
    dryRun?: boolean;
    beforeWrite?: (value: T) => void;
    /** Plugin folders not yet in place (an install's staging folder) that the edited config may refer to. */
    pluginDirs?: (value: T) => readonly string[];
    /** Named in the lock file while this edit holds it. */
    purpose?: string;
  } = {},
): Promise<EditResult<T>> {
  return withConfigLock(resolveConfigPath(io.env), options.purpose ?? 'claw config edit', () =>
    editLocked(io, edit, options),
  );
}

async function editLocked<T>(
  io: Io,
  edit: (raw: Record<string, unknown>, kernel: Kernel) => T | Promise<T>,
  options: Parameters<typeof editConfig<T>>[2] & object,
): Promise<EditResult<T>> {
  const before = await bootKernel(io, { strictConfig: false });
  const fileProblem = before.config.issues.find((issue) => issue.path === '<file>');
  if (fileProblem) throw new CliError(`cannot edit ${before.config.path}: ${fileProblem.message}`);
  const raw = structuredClone(before.config.raw);
  const value = await edit(raw, before);
  const after = await revalidate(io, before, raw, options.pluginDirs?.(value));
  const known = new Set(errorsOf(before).map(key));
  const introduced = errorsOf(after).filter((issue) => !known.has(key(issue)));
  if (introduced.length > 0) {
    throw new CliError(
      `refusing to write the config, the change would make it invalid: ${introduced.map(formatIssue).join('; ')}`,
    );
  }
  if (!options.dryRun) {
    options.beforeWrite?.(value);
    writeConfigFile(before.config.path, raw);
  }
  return { value, before, after };
}

function revalidate(
  io: Io,
  before: Kernel,
  raw: Record<string, unknown>,
  pluginDirs?: readonly string[],
): Promise<Kernel> {
  return createKernel({
    env: io.env,
    config: raw,
    configPath: before.config.path,
    stateDir: before.paths.stateDir,
    ...clawKernelParts({ bundledDir: BUNDLED_PLUGINS_DIR, pluginDirs }),
    strictConfig: false,
    logger: silentLogger,
  });
}
