/**
 * Test kit: boot a kernel in-process with exactly the plugins a test names — objects
 * (`definePlugin(...)`) or plugin directories — and nothing else. Zero plugins is fine.
 *
 *   const kernel = await createTestKernel({ plugins: [myPlugin] });
 *   const tool = await kernel.capabilities.get('tool', 'hello');
 *   await kernel.dispose();
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdkAliases } from './aliases.js';
import { createKernel, createLogger, type Kernel, type LogRecord, type Logger, type PluginDefinition } from '../kernel/index.js';

export interface TestKernelOptions {
  /** Plugin objects, or paths of plugin directories (with openclaw.plugin.json). */
  plugins?: ReadonlyArray<PluginDefinition | string>;
  /** openclaw.json content; nothing is read from disk. */
  config?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  /** Defaults to a fresh temporary directory, removed by `dispose()`. */
  stateDir?: string;
  /** Defaults to a logger that records into `kernel.logs`. */
  logger?: Logger;
}

export interface TestKernel extends Kernel {
  readonly stateDir: string;
  /** Everything logged at debug level and above (unless a logger was passed). */
  readonly logs: LogRecord[];
  /** Stop services and delete the temporary state dir. */
  dispose(): Promise<void>;
}

export async function createTestKernel(options: TestKernelOptions = {}): Promise<TestKernel> {
  const ownsStateDir = options.stateDir === undefined;
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'claw-test-'));
  const logs: LogRecord[] = [];
  const logger = options.logger ?? createLogger({ level: 'debug', sink: (record) => logs.push(record) });
  const plugins = options.plugins ?? [];
  const kernel = await createKernel({
    env: options.env ?? {},
    config: options.config ?? {},
    stateDir,
    discover: { config: false, workspace: false, bundled: false, global: false },
    pluginDirs: plugins.filter((plugin): plugin is string => typeof plugin === 'string'),
    plugins: plugins.filter((plugin): plugin is PluginDefinition => typeof plugin !== 'string'),
    logger,
    moduleAliases: sdkAliases(),
  });
  return {
    ...kernel,
    stateDir,
    logs,
    async dispose() {
      await kernel.stop();
      if (ownsStateDir) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
