/**
 * The hook bus: one tapable hook per catalog entry. Handlers are wrapped before they are
 * tapped, so a throwing handler is reported with its plugin id and the chain goes on
 * (tapable alone would abort the call). Priority maps to tapable's `stage`, which keeps
 * registration order among equal priorities.
 *
 * Every async handler has a budget (`timeoutMs`): past it the bus stops waiting, reports
 * "timed out" and goes on as if the handler returned nothing (that ends the host's await,
 * not the plugin's work). The run's `signal` is raced too: on abort a modifying hook
 * rejects with its reason and a void hook resolves, so `/stop` never waits on a plugin.
 * Sync hooks run to completion on the caller's stack and cannot be timed out.
 */
import { createRequire } from 'node:module';
import {
  defaultHookTimeoutMs,
  HOOK_MODES,
  isHookName,
  type HookMode,
  MERGE_RULES,
  type HookContext,
  type HookHandler,
  type HookName,
  type HookOutcome,
  type ModifyingHookName,
  type SyncHookName,
  type VoidHookName,
} from './catalog.js';

export interface HookErrorReport {
  hook: HookName;
  pluginId: string;
  kind: 'threw' | 'async-in-sync' | 'timeout';
  message: string;
  error?: unknown;
}

export interface HookRegistrationInfo {
  hook: HookName;
  pluginId: string;
  priority: number;
  timeoutMs: number;
}

export interface HookOptions {
  pluginId?: string;
  /** Higher runs first; default 0. */
  priority?: number;
  /** Longest wait for this handler; default per hook (catalog), 0 waits forever. Ignored for sync hooks. */
  timeoutMs?: number;
}

export interface HookBusOptions {
  onError?: (report: HookErrorReport) => void;
  /** Before an async hook runs: the plugin host loads plugins that declared it but are not loaded yet. */
  prepare?: (hook: HookName) => Promise<void> | void;
}

interface Registration extends HookRegistrationInfo {
  handler: (event: unknown, ctx: HookContext) => unknown;
}

/** Accumulator threaded through a modifying or sync chain. */
interface ChainState {
  event: unknown;
  ctx: HookContext;
  result: Record<string, unknown> | undefined;
  stopped: boolean;
}

type TapOptions = { name: string; stage: number };

/** The part of a tapable hook the bus uses (the three classes share it). */
interface Tapped {
  tap(options: TapOptions, fn: (state: ChainState) => ChainState): void;
  tapPromise(options: TapOptions, fn: (...args: any[]) => Promise<unknown>): void;
  call(state: ChainState): ChainState;
  promise(...args: unknown[]): Promise<any>;
}

const RESOLVED = Promise.resolve();
const TIMED_OUT = Symbol('timed out');
/** The run's abort reason, told apart from a handler's own rejection. */
class Aborted {
  constructor(readonly reason: unknown) {}
}

/** The outcome, TIMED_OUT after `ms`, or Aborted when `signal` fires. A void hook's timer is unref'd: no one needs its result. */
function bounded(outcome: PromiseLike<unknown>, ms: number, signal: AbortSignal | undefined, unref: boolean) {
  if (!(ms > 0) && !signal) return Promise.resolve(outcome);
  return new Promise((resolve, reject) => {
    const onAbort = () => finish(() => reject(new Aborted(signal!.reason)));
    const timer = ms > 0 ? setTimeout(() => finish(() => resolve(TIMED_OUT)), ms) : undefined;
    if (unref) timer?.unref?.();
    function finish(settle: () => void) {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    }
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(outcome).then(
      (value) => finish(() => resolve(value)),
      (error) => finish(() => reject(error)),
    );
  });
}

/** tapable loads when the first hook with handlers runs: ~5 ms most CLI commands never need. */
const require = createRequire(import.meta.url);
let tapable: Record<HookMode, new (args: string[], name: string) => Tapped> | undefined;
function hookClass(mode: HookMode) {
  tapable ??= {
    void: require('tapable/lib/AsyncParallelHook.js'),
    modifying: require('tapable/lib/AsyncSeriesWaterfallHook.js'),
    sync: require('tapable/lib/SyncWaterfallHook.js'),
  };
  return tapable[mode];
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function';
const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export class HookBus {
  private readonly registrations = new Map<HookName, Registration[]>();
  private readonly compiled = new Map<HookName, Tapped>();

  constructor(private readonly options: HookBusOptions = {}) {}

  on(hook: HookName, handler: HookHandler, options: HookOptions = {}): () => void {
    if (!isHookName(hook)) throw new TypeError(`unknown hook "${String(hook)}"`);
    if (typeof handler !== 'function') throw new TypeError(`handler for hook "${hook}" must be a function`);
    const priority = options.priority ?? 0;
    if (!Number.isFinite(priority)) throw new TypeError(`priority for hook "${hook}" must be a finite number`);
    const timeoutMs = options.timeoutMs ?? defaultHookTimeoutMs(hook);
    if (!(timeoutMs >= 0 && timeoutMs <= 2 ** 31 - 1)) {
      throw new TypeError(`timeoutMs for hook "${hook}" must be 0 or a positive number of ms`);
    }
    const registration: Registration = {
      hook,
      handler: handler as Registration['handler'],
      pluginId: options.pluginId ?? 'anonymous',
      priority,
      timeoutMs,
    };
    this.registrations.set(hook, [...(this.registrations.get(hook) ?? []), registration]);
    this.compiled.delete(hook);
    return () => this.removeWhere(hook, (entry) => entry === registration);
  }

  /** Remove every handler a plugin registered (used when a plugin fails or is unloaded). */
  removePlugin(pluginId: string): number {
    const ours = (entry: Registration) => entry.pluginId === pluginId;
    return [...this.registrations.keys()].reduce((removed, hook) => removed + this.removeWhere(hook, ours), 0);
  }

  has(hook: HookName): boolean {
    return (this.registrations.get(hook)?.length ?? 0) > 0;
  }

  list(hook?: HookName): HookRegistrationInfo[] {
    const hooks = hook ? [hook] : [...this.registrations.keys()];
    // Array.prototype.sort is stable, so equal priorities keep registration order.
    const byPriority = (a: Registration, b: Registration) => b.priority - a.priority;
    const ordered = hooks.flatMap((name) => [...(this.registrations.get(name) ?? [])].sort(byPriority));
    return ordered.map(({ hook, pluginId, priority, timeoutMs }) => ({ hook, pluginId, priority, timeoutMs }));
  }

  /**
   * Resolves once plugins declaring `hook` are loaded, so a caller can fire a void hook
   * without awaiting it and still keep hook order (handlers start before runVoid returns).
   */
  ready(hook: HookName): Promise<void> {
    return Promise.resolve(this.options.prepare?.(hook));
  }

  /** Void hook: every handler starts at once; resolves when all have settled. */
  async runVoid(hook: VoidHookName, event: object, ctx: HookContext = {}): Promise<void> {
    const pending = this.options.prepare?.(hook);
    if (pending) await pending;
    if (HOOK_MODES[hook] === 'void') await this.compile(hook)?.promise(event, ctx);
  }

  /** Modifying hook: handlers in priority order, results merged by the hook's rule. Rejects when ctx.signal aborts. */
  async runModifying(hook: ModifyingHookName, event: object, ctx: HookContext = {}): Promise<HookOutcome> {
    const pending = this.options.prepare?.(hook);
    if (pending) await pending;
    if (HOOK_MODES[hook] !== 'modifying') return {};
    const state = await this.compile(hook)?.promise({ event, ctx, result: undefined, stopped: false });
    return state?.result ?? {};
  }

  /** Sync hook: never awaited. Handlers must return plain values. */
  runSync(hook: SyncHookName, event: object, ctx: HookContext = {}): HookOutcome {
    if (HOOK_MODES[hook] !== 'sync') return {};
    return this.compile(hook)?.call({ event, ctx, result: undefined, stopped: false }).result ?? {};
  }

  private removeWhere(hook: HookName, matches: (entry: Registration) => boolean): number {
    const list = this.registrations.get(hook) ?? [];
    const kept = list.filter((entry) => !matches(entry));
    if (kept.length === list.length) return 0;
    this.registrations.set(hook, kept);
    this.compiled.delete(hook);
    return list.length - kept.length;
  }

  private report({ hook, pluginId }: Registration, kind: HookErrorReport['kind'], error?: unknown): void {
    const message =
      kind === 'async-in-sync'
        ? `Async in sync hook: plugin "${pluginId}" returned a promise from "${hook}"; its result was ignored`
        : `hook "${hook}" handler from plugin "${pluginId}" ${kind === 'timeout' ? describe(error) : `failed: ${describe(error)}`}`;
    try {
      this.options.onError?.({ hook, pluginId, kind, message, error });
    } catch {
      // A broken error sink must not break the message path.
    }
  }

  private compile(hook: HookName): Tapped | undefined {
    const cached = this.compiled.get(hook);
    if (cached) return cached;
    const list = this.registrations.get(hook);
    if (!list || list.length === 0) return undefined;
    const mode = HOOK_MODES[hook];
    const tapped = new (hookClass(mode))(mode === 'void' ? ['event', 'ctx'] : ['state'], hook);
    for (const registration of list) {
      const tap = { name: registration.pluginId, stage: -registration.priority };
      if (mode === 'sync') tapped.tap(tap, this.syncTap(registration));
      else tapped.tapPromise(tap, mode === 'void' ? this.voidTap(registration) : this.modifyingTap(registration));
    }
    this.compiled.set(hook, tapped);
    return tapped;
  }

  /** Calls the handler; a synchronous throw is reported and ends as `undefined`. */
  private invoke(registration: Registration, event: unknown, ctx: HookContext): unknown {
    try {
      return registration.handler(event, { ...ctx, pluginId: registration.pluginId });
    } catch (error) {
      this.report(registration, 'threw', error);
      return undefined;
    }
  }

  private timedOut = (registration: Registration) =>
    this.report(registration, 'timeout', `timed out after ${registration.timeoutMs} ms`);

  private fold(registration: Registration, state: ChainState, value: unknown): ChainState {
    if (value === undefined || value === null) return state;
    if (typeof value !== 'object') {
      this.report(registration, 'threw', new TypeError(`returned ${typeof value}; expected an object`));
      return state;
    }
    const next = value as Record<string, unknown>;
    const rule = MERGE_RULES[registration.hook] ?? {};
    state.result = rule.merge ? rule.merge(state.result ?? {}, next) : { ...state.result, ...next };
    if (rule.apply) state.event = rule.apply(state.event as Record<string, unknown>, state.result);
    if (rule.stops?.(next)) state.stopped = true;
    return state;
  }

  private voidTap(registration: Registration) {
    return (event: unknown, ctx: HookContext): Promise<void> => {
      const outcome = this.invoke(registration, event, ctx);
      if (!isThenable(outcome)) return RESOLVED;
      return bounded(outcome, registration.timeoutMs, ctx.signal, true).then(
        (value) => void (value === TIMED_OUT && this.timedOut(registration)),
        (error) => void (error instanceof Aborted || this.report(registration, 'threw', error)),
      );
    };
  }

  private modifyingTap(registration: Registration) {
    return (state: ChainState): Promise<ChainState> => {
      if (state.stopped) return Promise.resolve(state);
      if (state.ctx.signal?.aborted) return Promise.reject(state.ctx.signal.reason);
      const outcome = this.invoke(registration, state.event, state.ctx);
      if (!isThenable(outcome)) return Promise.resolve(this.fold(registration, state, outcome));
      return bounded(outcome, registration.timeoutMs, state.ctx.signal, false).then(
        (value) => (value === TIMED_OUT ? (this.timedOut(registration), state) : this.fold(registration, state, value)),
        (error) => {
          if (error instanceof Aborted) throw error.reason;
          this.report(registration, 'threw', error);
          return state;
        },
      );
    };
  }

  private syncTap(registration: Registration) {
    return (state: ChainState): ChainState => {
      if (state.stopped) return state;
      const outcome = this.invoke(registration, state.event, state.ctx);
      if (!isThenable(outcome)) return this.fold(registration, state, outcome);
      // Never awaited: keep a late rejection from becoming an unhandled one.
      Promise.resolve(outcome).catch(() => {});
      this.report(registration, 'async-in-sync');
      return state;
    };
  }
}
