/**
 * The plugin host: keeps one record per plugin, knows from manifests which plugin provides
 * which capability, and loads a plugin's code only when one of those capabilities is first
 * asked for (or one of its hooks first runs). A plugin that fails to load or register is
 * marked failed, everything it registered is removed, and the rest keep working.
 */
import { relative } from 'node:path';
import { MESSAGE_HOOKS, type HookName } from '../hooks/catalog.js';
import { trace } from '../util/trace.js';
import { pathUnder } from '../util/paths.js';
import { invokeTool } from '../tools/invoke.js';
import type { HookBus } from '../hooks/bus.js';
import type { Logger } from '../log.js';
import type { KernelPolicy } from '../policy.js';
import type { KernelConfig } from '../generated/types.js';
import { SLOT_NAMES, slotHolder, type SlotName } from '../config/keys.js';
import { declaredNames, manifestSlots, type PluginManifest } from './manifest.js';
import { withViews } from './views.js';
import { fail, resolvePlugins, type ConfigIssue, type Diagnostic, type PluginCandidate } from './resolve.js';
import type { PluginRecord } from './resolve.js';
import {
  createPluginApi,
  type ForeignPluginAdapter,
  type KernelServices,
  type PluginDefinition,
  type PluginLoader,
  type RegistrationSink,
} from './api.js';
import {
  CHANNELS_SERVICE,
  channelsFacade,
  DECLARING_FIELD,
  REGISTRATION,
  type CapabilityKind,
  type CapabilityLookup,
  type CapabilityTypes,
  type NamedCapabilityKind,
  type ServiceDefinition,
} from './capabilities.js';

/** No loaded-or-loadable plugin provides the capability asked for. */
export class CapabilityError extends Error {
  readonly code = 'CAPABILITY_UNAVAILABLE';
  override name = 'CapabilityError';
}

export class PluginUnavailableError extends Error {
  readonly code = 'PLUGIN_UNAVAILABLE';
  override name = 'PluginUnavailableError';
  constructor(
    readonly pluginId: string,
    message: string,
  ) {
    super(message);
  }
}

export interface PluginHostOptions {
  candidates: readonly PluginCandidate[];
  inline?: readonly PluginDefinition[];
  /** The kernel parts plugins see as they are; the host adds capabilities, plugins, tools and channels. */
  kernel: Omit<KernelServices, 'hooks' | 'capabilities' | 'plugins' | 'tools' | 'channels'>;
  hooks: HookBus;
  logger: Logger;
  policy: KernelPolicy;
  loadPlugin?: PluginLoader;
  foreign?: ForeignPluginAdapter;
  hostServices?: Readonly<Record<string, unknown>>;
}

/** The owner of the host's own services: not a plugin id (those start with a letter or digit). */
const HOST = '(host)';

type Registered = { pluginId: string; value: unknown };

const NAMED_KINDS = Object.keys(DECLARING_FIELD) as NamedCapabilityKind[];
type ByKind<V> = Record<CapabilityKind, Map<string, V>>;
const byKind = <V>() => Object.fromEntries(Object.keys(REGISTRATION).map((kind) => [kind, new Map()])) as ByKind<V>;
const SYNC_HOOKS: readonly HookName[] = ['tool_result_persist', 'before_message_write'];

export class PluginHost {
  readonly issues: ConfigIssue[];
  readonly diagnostics: Diagnostic[];
  /** The kernel as plugins see it (also handed to apps that drive plugins directly). */
  readonly kernelServices: KernelServices;
  private readonly records: PluginRecord[];
  private readonly config: KernelConfig;
  private readonly byId = new Map<string, PluginRecord>();
  private readonly inline = new Map<string, PluginDefinition>();
  /** kind → name → owning plugin id, for every plugin that is on. */
  private readonly declared = byKind<string>();
  /** `kind:name` → plugin id, for plugins that are off, so "not available" errors can say why. */
  private readonly declaredOff = new Map<string, string>();
  /** kind → name → what was registered, and by whom. */
  private readonly registry = byKind<Registered>();
  /** Hooks whose declaring plugins have not been loaded yet. */
  private readonly pendingHooks = new Map<HookName, Set<string>>();
  private readonly activations = new Map<string, Promise<void>>();
  private readonly disposers = new Map<string, Array<() => void>>();
  private readonly services: Array<{ pluginId: string; service: ServiceDefinition; controller: AbortController }> = [];
  /** Capabilities as registered: only the choke points use them (see views.ts). */
  private readonly capabilities: CapabilityLookup;
  /** 'starting' while start() loads the onStartup plugins: the channels service waits for all of them. */
  private running: boolean | 'starting' = false;

  constructor(private readonly options: PluginHostOptions) {
    const inline = (options.inline ?? []).map((definition) => {
      const manifest = inlineManifest(definition);
      this.inline.set(manifest.id, definition);
      return manifest;
    });
    this.config = options.kernel.config() as KernelConfig;
    for (const [id, api] of Object.entries(options.hostServices ?? {}))
      this.registry.service.set(id, { pluginId: HOST, value: { id, api } });
    const resolved = resolvePlugins({ ...options, inline, config: this.config });
    ({ records: this.records, issues: this.issues, diagnostics: this.diagnostics } = resolved);
    for (const record of this.records) if (!this.byId.has(record.id)) this.byId.set(record.id, record);
    this.indexDeclarations();
    const capabilities = (this.capabilities = this.lookup());
    const { hooks, kernel, policy } = options;
    const channels = channelsFacade(capabilities);
    this.kernelServices = {
      ...kernel,
      hooks,
      capabilities: withViews(capabilities, channels, kernel.redact, () => false),
      plugins: () => this.records,
      tools: { invoke: (request) => invokeTool({ ...kernel, hooks, capabilities, policy }, request) },
      channels,
    };
  }

  /** Every plugin found, in precedence order. */
  list = (): readonly PluginRecord[] => this.records;
  get = (id: string): PluginRecord | undefined => this.byId.get(id);

  /** Plugins handed over as objects are loaded at boot: their code is already in memory. */
  async activateInline(): Promise<void> {
    for (const id of this.inline.keys())
      if (this.byId.get(id)?.status === 'ready') await this.activate(id).catch(() => {});
  }

  /** Load and register a plugin (once). Rejects with PluginUnavailableError when it cannot be used. */
  activate(id: string): Promise<void> {
    const record = this.byId.get(id);
    if (!record) return Promise.reject(new PluginUnavailableError(id, `no plugin "${id}" is installed`));
    const existing = this.activations.get(id);
    if (existing) return existing;
    if (record.status !== 'ready') return Promise.reject(unavailable(record));
    return this.activations.set(id, this.load(record)).get(id)!;
  }

  /** Load every plugin that is on; failures are recorded, not thrown. */
  async activateAll(filter: (record: PluginRecord) => boolean = () => true): Promise<void> {
    const ready = this.records.filter((record) => record.status === 'ready' && filter(record));
    await Promise.all(ready.map((record) => this.activate(record.id).catch(() => {})));
  }

  /** Services of plugins already loaded start first, then each onStartup plugin's as it loads in turn; channels last. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = 'starting';
    await this.startServices(undefined, true);
    for (const record of this.records.filter((r) => r.manifest?.activation?.onStartup === true || this.isForeign(r)))
      if (record.status === 'ready') await this.activate(record.id).catch(() => {});
    if (this.running !== 'starting') return; // stopped meanwhile
    this.running = true;
    await this.startServices();
  }

  /** Stop services in reverse start order. Errors are logged; stopping always completes. */
  async stop(): Promise<void> {
    this.running = false;
    for (const { pluginId, service, controller } of [...this.services].reverse()) {
      controller.abort();
      try {
        await service.stop?.();
      } catch (error) {
        this.options.logger.error(`service "${service.id}" failed to stop: ${message(error)}`, { plugin: pluginId });
      }
    }
    this.services.length = 0;
  }

  /**
   * Before an async hook runs (the bus asks): load plugins that declared it. A message-path
   * hook also loads those declaring sync hooks, which cannot wait for a load when they fire.
   */
  prepareHook(hook: HookName): Promise<void> | undefined {
    if (this.pendingHooks.size === 0) return undefined;
    const ids = new Set(this.pendingHooks.get(hook));
    if ((MESSAGE_HOOKS as readonly string[]).includes(hook)) {
      for (const sync of SYNC_HOOKS) for (const id of this.pendingHooks.get(sync) ?? []) ids.add(id);
    }
    if (ids.size === 0) return undefined;
    return Promise.all([...ids].map((id) => this.activate(id).catch(() => {}))).then(() => undefined);
  }

  private indexDeclarations(): void {
    for (const record of this.records) {
      const manifest = record.manifest;
      if (!manifest || this.inline.has(record.id)) continue;
      if (record.status === 'disabled') {
        for (const [kind, name] of declarations(manifest)) this.declaredOff.set(`${kind}:${name}`, record.id);
        continue;
      }
      if (record.status !== 'ready') continue;
      const clash = declarations(manifest).find(([kind, name]) => this.declared[kind].has(name));
      if (clash) {
        const [kind, name] = clash;
        fail(record, `${kind} "${name}" is already provided by plugin "${this.declared[kind].get(name)}"`);
        continue;
      }
      for (const [kind, name] of declarations(manifest)) {
        if (name.includes('*')) continue; // a runtime namespace (`*__*`): names known once registered
        this.declared[kind].set(name, record.id);
        if (kind === 'gatewayMethod') this.options.kernel.protocol.declareMethod(name, record.id);
      }
      for (const hook of manifest.hooks ?? [])
        this.pendingHooks.set(hook, (this.pendingHooks.get(hook) ?? new Set<string>()).add(record.id));
    }
  }

  private async load(record: PluginRecord): Promise<void> {
    const logger = this.options.logger.child({ plugin: record.id });
    const failWith = (error: string): PluginUnavailableError => {
      fail(record, error);
      logger.error(error);
      this.settlePending(record.id);
      return unavailable(record);
    };
    const unmet = this.unmetRequirement(record);
    if (unmet) {
      this.diagnostics.push({ level: 'error', pluginId: record.id, message: `plugin "${record.id}" ${unmet}` });
      throw failWith(unmet);
    }
    const { loadPlugin, foreign, kernel } = this.options;
    let definition: PluginDefinition;
    try {
      if (!this.inline.has(record.id) && !loadPlugin) throw new Error('the kernel was given no plugin loader');
      definition = this.inline.get(record.id) ?? (await loadPlugin!(record, kernel.paths));
      if (this.isForeign(record)) definition = foreign!.adapt(definition, record);
    } catch (error) {
      const entry = record.entryPath && record.dir ? relative(record.dir, record.entryPath) : 'entry module';
      throw failWith(`cannot load ${entry}: ${message(error)}`);
    }
    try {
      const { channels, redact } = this.kernelServices;
      const outboundPath = () => this.provider('service', CHANNELS_SERVICE) === record.id;
      const capabilities = withViews(this.capabilities, channels, redact, outboundPath);
      await definition.register(
        createPluginApi(record, this.sink(record), { ...this.kernelServices, capabilities }, logger),
      );
    } catch (error) {
      this.rollback(record.id);
      throw failWith(`register() threw: ${message(error)}`);
    }
    record.status = 'active';
    trace(`plugin ${record.id}: loaded`);
    this.settlePending(record.id);
    this.noteMissing(record);
    if (this.running) await this.startServices(record.id, this.running === 'starting');
    logger.debug('plugin loaded');
  }

  /** What the manifest `requires` and no plugin that is on provides, naming the plugin that would. */
  private unmetRequirement(record: PluginRecord): string | undefined {
    const { services = [], slots = [] } = record.manifest?.requires ?? {};
    const needs = [
      ...services.map((name) => {
        const declaring = this.records.find((other) => other.manifest?.services?.includes(name));
        return [`the service "${name}"`, this.provider('service', name) ?? declaring?.id] as const;
      }),
      ...slots.map((slot) => [`the ${slot} slot`, slotHolder(this.config.plugins, slot)] as const),
    ];
    for (const [what, id] of needs) {
      const provider = id === undefined || id === 'none' ? undefined : this.byId.get(id);
      if (id === HOST || provider?.status === 'ready' || provider?.status === 'active') continue;
      const state = provider?.status === 'failed' ? `failed: ${provider.error}` : `is off (${provider?.reason})`;
      const why = provider ? `plugin "${id}" provides it but ${state}` : `no plugin "${id}" is installed`;
      return `requires ${what}, which is unavailable: ${id === undefined || id === 'none' ? 'no plugin provides it' : why}`;
    }
    return undefined;
  }

  /** The plugin that registered `kind` `name`, or whose manifest declares it. */
  private provider = (kind: CapabilityKind, name: string): string | undefined =>
    this.registry[kind].get(name)?.pluginId ?? this.declared[kind].get(name);

  private isForeign = (record: PluginRecord): boolean =>
    !this.inline.has(record.id) && this.options.foreign?.accepts(record) === true;

  /** Where one plugin's `api.register*` and `api.on` calls land. */
  private sink(record: PluginRecord): RegistrationSink {
    // Plugins handed over as objects have no manifest to check against: they declare by registering.
    const declaredOnly = !this.inline.has(record.id) && !this.isForeign(record);
    const manifest = record.manifest!;
    const disposers = this.disposers.get(record.id) ?? [];
    this.disposers.set(record.id, disposers);
    return {
      register: (kind, name, value) => {
        // Names the manifest declared are indexed; only globs and routes need the slow check.
        if (declaredOnly && this.declared[kind].get(name) !== record.id) checkDeclared(manifest, kind, name);
        const table = this.registry[kind];
        const existing = table.get(name);
        if (existing) {
          throw new Error(
            `${kind} "${name}" is ${existing.pluginId === record.id ? 'registered twice' : `already registered by plugin "${existing.pluginId}"`}`,
          );
        }
        if (kind === 'gatewayMethod') {
          const { params, scope, sideEffect, description } = value as CapabilityTypes['gatewayMethod'];
          this.options.kernel.protocol.registerMethod(name, record.id, { params, scope, sideEffect, description });
        }
        const entry = { pluginId: record.id, value };
        table.set(name, entry);
        if (!declaredOnly && kind in DECLARING_FIELD) {
          // Routes are looked up by prefix, so an undeclared one is indexed by its path.
          const path = kind === 'httpRoute' ? (value as CapabilityTypes['httpRoute']).path.replace(/\/\*$/, '') : name;
          this.declared[kind].set(path, record.id);
        }
        // Removes this registration only, never a later one under the same name.
        const dispose = () => void (table.get(name) === entry && table.delete(name));
        disposers.push(dispose);
        return dispose;
      },
      onHook: (hook, handler, { priority, timeoutMs }) => {
        if (declaredOnly && !(manifest.hooks ?? []).includes(hook)) {
          throw new Error(`hook "${hook}" is not declared in the manifest "hooks" list`);
        }
        // The operator's budget (plugins.entries.<id>.hooks) wins over the plugin's own.
        const policy = this.config.plugins?.entries?.[record.id]?.hooks;
        timeoutMs = policy?.timeouts?.[hook] ?? policy?.timeoutMs ?? timeoutMs;
        disposers.push(this.options.hooks.on(hook, handler, { pluginId: record.id, priority, timeoutMs }));
      },
    };
  }

  /** A plugin that declares more than it registers still works; `claw plugins list` says so. */
  private noteMissing(record: PluginRecord): void {
    if (!record.manifest || this.inline.has(record.id)) return;
    for (const [kind, name] of declarations(record.manifest)) {
      if (kind !== 'httpRoute' && !name.includes('*') && this.registry[kind].get(name)?.pluginId !== record.id) {
        record.warnings.push(`declares ${kind} "${name}" but did not register it`);
      }
    }
    for (const slot of record.slots) {
      if (!this.registry[slot].has(record.id)) record.warnings.push(`declares kind "${slot}" but did not register it`);
    }
  }

  private settlePending(id: string): void {
    for (const [hook, ids] of this.pendingHooks) if (ids.delete(id) && ids.size === 0) this.pendingHooks.delete(hook);
  }

  private rollback(id: string): void {
    for (const dispose of (this.disposers.get(id) ?? []).reverse()) dispose();
    this.disposers.delete(id);
    this.options.hooks.removePlugin(id);
    this.options.kernel.protocol.unregisterOwner(id);
  }

  /**
   * Start registered services that are not running (only `pluginId`'s, when given). The
   * channel service goes last, so it stops first: channel accounts feed the agent loop and
   * the gateway, and start once those are up.
   */
  private async startServices(pluginId?: string, holdChannels = false): Promise<void> {
    const entries = [...this.registry.service]
      .filter(([, entry]) => pluginId === undefined || entry.pluginId === pluginId)
      .sort(([a], [b]) => Number(a === CHANNELS_SERVICE) - Number(b === CHANNELS_SERVICE));
    for (const [name, entry] of entries) {
      if ((holdChannels && name === CHANNELS_SERVICE) || this.services.some((run) => run.service.id === name)) continue;
      const service = entry.value as ServiceDefinition;
      const controller = new AbortController();
      const logger = this.options.logger.child({ plugin: entry.pluginId, service: service.id });
      try {
        await service.start?.({ logger, stateDir: this.options.kernel.paths.stateDir, signal: controller.signal });
        this.services.push({ pluginId: entry.pluginId, service, controller });
      } catch (error) {
        const record = this.byId.get(entry.pluginId)!;
        controller.abort();
        this.rollback(entry.pluginId);
        fail(record, `service "${service.id}" failed to start: ${message(error)}`);
        logger.error(record.error!);
      }
    }
  }

  private lookup(): CapabilityLookup {
    const { registry, declared } = this;
    /** Registered value, loading the declaring plugin first; PluginUnavailableError if it cannot load. */
    const load = async <K extends CapabilityKind>(kind: K, name: string): Promise<CapabilityTypes[K] | undefined> => {
      const owner = registry[kind].has(name) ? undefined : declared[kind].get(name);
      if (owner) await this.activate(owner);
      const value = registry[kind].get(name)?.value as CapabilityTypes[K] | undefined;
      if (owner && !value)
        throw new CapabilityError(`plugin "${owner}" declares ${kind} "${name}" but did not register it`);
      return value;
    };
    return {
      find: (kind, name) =>
        load(kind, name).catch((error) => {
          if (error instanceof PluginUnavailableError) return undefined;
          throw error;
        }),
      get: async (kind, name) => {
        const value = await load(kind, name).catch((error) => {
          if (!(error instanceof PluginUnavailableError)) throw error;
          throw new CapabilityError(`${kind} "${name}" is unavailable: ${error.message}`);
        });
        if (value !== undefined) return value;
        const off = this.declaredOff.get(`${kind}:${name}`);
        const hint = off ? `: plugin "${off}" provides it but is off (${this.byId.get(off)!.reason})` : '';
        throw new CapabilityError(`no plugin provides ${kind} "${name}"${hint}`);
      },
      list: (kind) => {
        const loaded = registry[kind] ?? new Map<string, Registered>();
        const infos = new Map<string, { pluginId: string; loaded: boolean }>();
        for (const [name, pluginId] of declared[kind] ?? []) infos.set(name, { pluginId, loaded: loaded.has(name) });
        for (const [name, entry] of loaded) infos.set(name, { pluginId: entry.pluginId, loaded: true });
        // Code-point order (Map keys are unique): a collator loads ICU's data, ≈ 3 MB resident.
        return [...infos].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, info]) => ({ kind, name, ...info }));
      },
      routePrefixes: () => declared.httpRoute,
      routes: async (pluginId) => {
        await this.activate(pluginId);
        return [...registry.httpRoute.values()]
          .filter((entry) => entry.pluginId === pluginId)
          .map((entry) => entry.value as CapabilityTypes['httpRoute']);
      },
      slot: async (slot) => {
        const holder = slotHolder(this.config.plugins, slot);
        if (holder === 'none') return undefined;
        const record = this.byId.get(holder);
        if (!record || record.status === 'disabled') return undefined;
        try {
          await this.activate(holder);
        } catch (error) {
          throw new CapabilityError(`the ${slot} slot holder "${holder}" is unavailable: ${message(error)}`);
        }
        const registered = registry[slot].get(holder);
        if (!registered)
          throw new CapabilityError(`plugin "${holder}" holds the ${slot} slot but did not register a ${slot}`);
        return registered.value as CapabilityTypes[typeof slot];
      },
    };
  }
}

/** Every named capability a manifest declares, as [kind, name] pairs. */
function declarations(manifest: PluginManifest): Array<[NamedCapabilityKind, string]> {
  return NAMED_KINDS.flatMap((kind) =>
    declaredNames(manifest, DECLARING_FIELD[kind]).map((name) => [kind, name] as const),
  );
}

/** A plugin with a manifest may register only what the manifest declares. */
function checkDeclared(manifest: PluginManifest, kind: CapabilityKind, name: string): void {
  if ((SLOT_NAMES as readonly string[]).includes(kind)) {
    if (!manifestSlots(manifest).includes(kind as SlotName))
      throw new Error(`registering a ${kind} needs "kind": "${kind}" in the manifest`);
  } else if (kind === 'httpRoute') {
    const path = name.slice(name.indexOf(' ') + 1).replace(/\/\*$/, '');
    if (!(manifest.httpRoutes ?? []).some((prefix) => pathUnder(path, prefix))) {
      throw new Error(`route "${path}" is not under any manifest "httpRoutes" prefix`);
    }
  } else {
    const field = DECLARING_FIELD[kind as NamedCapabilityKind];
    const glob = (entry: string) => entry.split('*').map((part) => part.replace(/[\\^$.|?+()[\]{}]/g, '\\$&'));
    if (!declaredNames(manifest, field).some((entry) => new RegExp(`^${glob(entry).join('.*')}$`).test(name))) {
      throw new Error(`${kind} "${name}" is not declared in the manifest "${field}" list`);
    }
  }
}

function inlineManifest(definition: PluginDefinition): PluginManifest {
  if (!definition || typeof definition.register !== 'function') {
    throw new TypeError('an inline plugin must be an object with a register(api) function');
  }
  if (typeof definition.id !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/.test(definition.id)) {
    throw new TypeError(
      `an inline plugin needs an id of lowercase letters, digits, ".", "_" or "-" (got ${JSON.stringify(definition.id)})`,
    );
  }
  const { id, name, description, version, kind, configSchema = { type: 'object' } } = definition;
  return { id, name, description, version, configSchema, ...(kind !== undefined ? { kind } : {}) };
}

const unavailable = ({ id, status, error, reason }: PluginRecord) =>
  new PluginUnavailableError(
    id,
    status === 'failed' ? `plugin "${id}" failed: ${error}` : `plugin "${id}" is off (${reason})`,
  );
const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));
