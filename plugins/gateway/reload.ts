/**
 * Config hot reload (`gateway.reload.mode`): after the gateway writes the config, and when
 * the file changes on disk (an editor, a CLI that could not reach the gateway), the change
 * is planned path by path. `hybrid` (default) applies what is safe in place and restarts the
 * gateway for the rest; `hot` applies what is safe and reports the rest as needing a
 * restart; `restart` restarts for any change; `off` applies nothing. An invalid edit on disk
 * is refused with a warning and the running config stays.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import {
  formatPath,
  getPath,
  hasPath,
  isSecretKey,
  setPath,
  unsetPath,
  type ConfigSnapshot,
  type PathSegment,
  type PluginApi,
  type ReloadResult,
} from '../../sdk/index.js';
import { configHash } from '../../sdk/config.js';
import { planReload, reloadMessage, reloadMode } from './reload-plan.js';

const DEBOUNCE_MS = 300;
export const RESTART_DELAY_MS = 250;

export class ConfigReloader {
  /**
   * The file's resolved config as the running gateway has taken it: as at start, plus what
   * was applied since (not what awaits a restart). Changes are planned against this; the
   * kernel's own config may differ by command-line overrides, which a reload keeps.
   */
  private applied?: Record<string, unknown>;
  private seenHash?: string;
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  /** The `plugins` section last seen, and how often it changed: what plugins.changed reports. */
  private pluginsSeen?: string;
  private pluginGeneration = 0;

  constructor(
    private readonly api: PluginApi,
    /** Restart the gateway in place; false when this process cannot (no `claw gateway` runner). */
    private readonly restart: (reason: string, delayMs: number) => boolean,
  ) {}

  /** The file as it is now is what runs (at start: after the gateway saved a generated token). */
  private baseline(): Record<string, unknown> {
    this.seenHash = configHash(this.api.kernel.paths.configPath);
    this.applied = structuredClone(this.api.kernel.configFile.read().resolved) as Record<string, unknown>;
    this.pluginsSeen = JSON.stringify(this.applied.plugins ?? null);
    return this.applied;
  }

  /** A config the gateway itself validated and wrote over `before` (hash `hash`): apply it now. */
  written(before: ConfigSnapshot, snapshot: ConfigSnapshot, hash: string, mayRestart = true): ReloadResult {
    this.applied ??= structuredClone(before.resolved) as Record<string, unknown>;
    this.pluginsSeen ??= JSON.stringify((before.resolved as { plugins?: unknown }).plugins ?? null);
    this.seenHash = hash;
    return this.apply(snapshot, mayRestart);
  }

  watch(): void {
    this.baseline();
    const file = this.api.kernel.paths.configPath;
    try {
      // The directory, not the file: writes replace the file by renaming over it.
      this.watcher = watch(dirname(file), (_event, name) => {
        if (name !== null && name !== basename(file)) return;
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.check(), DEBOUNCE_MS);
      });
      this.watcher.on('error', (error) => this.api.logger.warn(`config watch stopped: ${error.message}`));
    } catch (error) {
      this.api.logger.warn(
        `cannot watch ${file} for changes (${(error as Error).message}); config edits made outside the gateway need a restart`,
      );
    }
  }

  close(): void {
    clearTimeout(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
  }

  /** The file changed on disk: validate it, then apply it like a write of our own. */
  async check(): Promise<void> {
    const kernel = this.api.kernel;
    const hash = configHash(kernel.paths.configPath);
    if (this.applied === undefined) this.baseline();
    if (hash === this.seenHash) return;
    this.seenHash = hash;
    const snapshot = kernel.configFile.read();
    const errors = snapshot.issues.some((issue) => issue.path === '<file>')
      ? snapshot.issues
      : (await kernel.configFile.check(snapshot.raw)).filter((issue) => issue.level === 'error');
    if (this.seenHash !== hash) return; // changed again while we checked; the next check covers it
    if (errors.length > 0) {
      this.api.logger.warn(
        `config change on disk ignored, the running config stays: ${errors.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
      );
      return;
    }
    const result = this.apply(snapshot);
    kernel.protocol.emit('config.changed', { path: snapshot.path, hash, ts: Date.now() });
    if (result.changedPaths.length > 0)
      this.api.logger.info(`config changed on disk: ${result.message}`, { paths: result.changedPaths });
  }

  private apply(snapshot: ConfigSnapshot, mayRestart = true): ReloadResult {
    const after = snapshot.resolved as Record<string, unknown>;
    const applied = this.applied!;
    const plan = planReload(applied, after);
    const mode = reloadMode(after);
    const hot = mode === 'off' || mode === 'restart' ? [] : plan.hot;
    const restartPaths = mode === 'off' || mode === 'restart' ? [...plan.hot, ...plan.restart] : plan.restart;
    // Paths that change nothing at run time are taken as they are in every mode.
    const taken = [...hot, ...plan.none];
    if (taken.length > 0) {
      const running = structuredClone(this.api.kernel.config()) as Record<string, unknown>;
      for (const path of taken) {
        copyPath(after, applied, path);
        copyPath(after, running, path);
      }
      // The redactor was built from the boot config: a new key or token must be masked too.
      addSecrets(running, (secret) => this.api.kernel.redact.add(secret));
      this.api.kernel.configFile.use({ ...snapshot, resolved: running });
    }
    const wantsRestart = mayRestart && restartPaths.length > 0 && (mode === 'hybrid' || mode === 'restart');
    const restartScheduled =
      wantsRestart && this.restart(`config change: ${restartPaths.map(formatPath).join(', ')}`, RESTART_DELAY_MS);
    const fields = {
      mode,
      changedPaths: plan.changedPaths,
      hotPaths: hot.map(formatPath),
      restartPaths: restartPaths.map(formatPath),
      restartRequired: restartPaths.length > 0,
      restartScheduled,
    };
    this.announcePlugins(
      after,
      restartPaths.some((path) => path[0] === 'plugins'),
    );
    return { ...fields, message: reloadMessage(fields) };
  }

  /** Plugins enabled, disabled, installed or reconfigured (by a method, the CLI or an editor): tell clients. */
  private announcePlugins(after: Record<string, unknown>, restartRequired: boolean): void {
    const plugins = JSON.stringify(after.plugins ?? null);
    const changed = this.pluginsSeen !== undefined && plugins !== this.pluginsSeen;
    this.pluginsSeen = plugins;
    if (!changed) return;
    this.pluginGeneration += 1;
    this.api.kernel.protocol.emit('plugins.changed', { generation: this.pluginGeneration, restartRequired });
  }
}

function copyPath(from: Record<string, unknown>, to: Record<string, unknown>, path: PathSegment[]): void {
  if (hasPath(from, path)) setPath(to, path, structuredClone(getPath(from, path)));
  else unsetPath(to, path);
}

function addSecrets(value: unknown, add: (secret: string) => void, secretKey = false): void {
  if (typeof value === 'string') {
    if (secretKey) add(value);
  } else if (Array.isArray(value)) {
    for (const item of value) addSecrets(item, add, secretKey);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) addSecrets(item, add, secretKey || isSecretKey(key));
  }
}
