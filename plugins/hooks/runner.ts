/**
 * The `internal-hooks` service: runs the selected hooks' handlers when their event fires.
 * A handler's module is loaded the first time one of its events fires (TypeScript through
 * jiti, cached under the state dir; JavaScript by import). Handlers for one event run one
 * after another, family subscribers (`command`) before exact ones (`command:new`); each is
 * bounded by a timeout, and one that throws, hangs or fails to load is logged and skipped —
 * the message path that emitted the event goes on regardless.
 *
 * Discovery is redone when the `hooks` config or the workspace changes, so `claw hooks
 * enable` applies without a restart; hook files themselves are read once (restart after
 * editing a handler).
 */
import { chmodSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { agentPaths, defaultAgentId } from '../../sdk/agent/index.js';
import {
  sdkAliases,
  ensurePrivateDir,
  type InternalHookEvent,
  type InternalHooksService,
  type InternalHookType,
  type KernelServices,
  type Logger,
} from '../../sdk/index.js';
import {
  discoverHooks,
  hookStatus,
  selectHooks,
  selectionOf,
  type HookStatus,
  type InternalSection,
} from './discovery.js';
import { hooksSection } from './settings.js';

export const DEFAULT_HANDLER_TIMEOUT_MS = 30_000;

type Handler = (event: InternalHookEvent) => unknown;

export interface HookInventory {
  workspaceDir: string;
  managedDir: string;
  statuses: HookStatus[];
  selected: HookStatus[];
}

export function internalSection(config: Record<string, unknown>): InternalSection {
  return (hooksSection(config).internal ?? {}) as InternalSection;
}

/** Every discovered hook judged against the config (for the CLI and the runner). */
export function hookInventory(
  kernel: Pick<KernelServices, 'config' | 'paths' | 'env'>,
  bundledDir: string,
  agentId?: string,
): HookInventory {
  const config = kernel.config() as Record<string, unknown>;
  const internal = internalSection(config);
  const agent = agentId ?? defaultAgentId(config);
  const workspaceDir = agentPaths(config, agent, kernel.paths).workspaceDir;
  const managedDir = join(kernel.paths.stateDir, 'hooks');
  const discovery = discoverHooks({ bundledDir, managedDir, workspaceDir, extraDirs: internal.load?.extraDirs ?? [] });
  const statuses = discovery.hooks.map((hook) => {
    const status = hookStatus(hook, internal, config, kernel.env);
    const lost = discovery.shadowed.get(hook.name);
    return lost ? { ...status, shadowed: lost.map((other) => `${other.source}:${other.baseDir}`) } : status;
  });
  return { workspaceDir, managedDir, statuses, selected: selectHooks(statuses, internal) };
}

export class InternalHookRunner implements InternalHooksService {
  private cacheKey?: string;
  private selected: HookStatus[] = [];
  private readonly modules = new Map<string, Promise<Handler>>();

  constructor(
    private readonly kernel: KernelServices,
    private readonly logger: Logger,
    private readonly bundledDir: string,
    private readonly timeoutMs = DEFAULT_HANDLER_TIMEOUT_MS,
  ) {}

  /** The selection for the config as it is now (rediscovered when the config changed). */
  current(): HookStatus[] {
    const config = this.kernel.config() as Record<string, unknown>;
    const key = JSON.stringify([internalSection(config), config.agents ?? null]);
    if (key !== this.cacheKey) {
      this.cacheKey = key;
      // Nothing asked for (the default): no folder is read at all.
      this.selected =
        selectionOf(internalSection(config)) === 'none' ? [] : hookInventory(this.kernel, this.bundledDir).selected;
      for (const hook of this.selected) {
        if (hook.unknownEvents.length)
          this.logger.warn(`hook ${hook.name} subscribes to events claw never emits: ${hook.unknownEvents.join(', ')}`);
      }
    }
    return this.selected;
  }

  private listeners(type: InternalHookType, action: string): HookStatus[] {
    const hooks = this.current();
    const exact = `${type}:${action}`;
    return [
      ...hooks.filter((hook) => hook.events.includes(type)),
      ...hooks.filter((hook) => hook.events.includes(exact)),
    ];
  }

  wants(type: InternalHookType, action: string): boolean {
    return this.listeners(type, action).length > 0;
  }

  async emit(
    type: InternalHookType,
    action: string,
    sessionKey: string,
    context: Record<string, unknown>,
  ): Promise<InternalHookEvent> {
    const event: InternalHookEvent = {
      type,
      action,
      sessionKey,
      timestamp: new Date(),
      context: { cfg: this.kernel.config(), stateDir: this.kernel.paths.stateDir, ...context },
      messages: [],
    };
    for (const hook of this.listeners(type, action)) {
      await this.runOne(hook, event);
    }
    return event;
  }

  private async runOne(hook: HookStatus, event: InternalHookEvent): Promise<void> {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const handler = await this.load(hook);
      const timeout = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(new Error(`did not finish within ${this.timeoutMs} ms (left running)`)),
          this.timeoutMs,
        );
        timer.unref?.();
      });
      await Promise.race([Promise.resolve().then(() => handler(event)), timeout]);
      this.logger.debug(`hook ${hook.name} handled ${event.type}:${event.action} in ${Date.now() - started} ms`);
    } catch (error) {
      this.logger.error(
        `hook ${hook.name} (${hook.source}) failed on ${event.type}:${event.action}: ${(error as Error)?.message ?? String(error)}`,
      );
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private load(hook: HookStatus): Promise<Handler> {
    const key = `${hook.handlerPath}#${hook.export}`;
    let loading = this.modules.get(key);
    if (!loading) {
      loading = this.importModule(hook.handlerPath!).then((module) => {
        const fn =
          module[hook.export] ??
          (hook.export === 'default' ? (module.default as Record<string, unknown> | undefined)?.default : undefined);
        if (typeof fn !== 'function') throw new Error(`${hook.handlerPath} has no function export "${hook.export}"`);
        return fn as Handler;
      });
      // A module that failed to load is tried again at the next event (it may have been fixed).
      loading.catch(() => this.modules.delete(key));
      this.modules.set(key, loading);
    }
    return loading;
  }

  private async importModule(file: string): Promise<Record<string, unknown>> {
    if (!/\.(m|c)?ts$/.test(file)) return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    const { createJiti } = await import('jiti');
    const cacheDir = join(this.kernel.paths.stateDir, 'cache', 'jiti');
    let fsCache: string | false = cacheDir;
    try {
      ensurePrivateDir(cacheDir);
    } catch {
      fsCache = false;
    }
    const jiti = createJiti(import.meta.url, {
      fsCache,
      alias: sdkAliases(),
      interopDefault: false,
      moduleCache: true,
    });
    try {
      return (await jiti.import(file)) as Record<string, unknown>;
    } finally {
      if (fsCache) {
        for (const name of safeList(cacheDir)) {
          try {
            chmodSync(join(cacheDir, name), 0o600);
          } catch {
            // Gone meanwhile.
          }
        }
      }
    }
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
