/**
 * Booting the kernel: config, lanes, hook bus, protocol registry and the plugin host,
 * wired together. Booting runs no plugin code except for plugins passed in as objects;
 * everything else loads when first used, or at `start()` when a manifest asks for it.
 */
import { dirname, join } from 'node:path';
import { HookBus, type HookErrorReport } from './hooks/bus.js';
import { LaneScheduler } from './lanes.js';
import { redactingLogger, silentLogger, type Logger, type Redactor } from './log.js';
import type { KernelPolicy } from './policy.js';
import { ProtocolRegistry } from './protocol/registry.js';
import { ConfigError, judged, readConfigFile, snapshotOf, usableConfig, type ConfigSnapshot } from './config/store.js';
import { useValidatorStore, type ValidatorStore } from './validation.js';
import { trace } from './util/trace.js';
import { resolveConfigPath, resolveStateDir, resolveUserPath, type Env } from './config/paths.js';
import type { KernelConfig } from './generated/types.js';
import { PluginHost } from './plugin-host/host.js';
import type {
  ConfigAccess,
  ForeignPluginAdapter,
  KernelPaths,
  PluginDefinition,
  PluginLoader,
} from './plugin-host/api.js';
import type { CapabilityLookup } from './plugin-host/capabilities.js';
import type { ConfigIssue, PluginCandidate } from './plugin-host/resolve.js';

export interface KernelOptions {
  env?: Env;
  /** Use this config object instead of reading the config file. */
  config?: Record<string, unknown>;
  configPath?: string;
  stateDir?: string;
  /** Plugin directories, manifests read (the host's clawDiscovery); none without it: only the plugins given as objects. */
  discover?: (at: { config: KernelConfig; paths: KernelPaths; env: Env }) => readonly PluginCandidate[];
  plugins?: readonly PluginDefinition[];
  /** Where the kernel and plugins log (behind the redactor); the SDK's createLogger is the plain one. */
  logger: Logger;
  /** The rules enforced at the choke points: the host's `clawPolicy`, or a test's own. */
  policy: KernelPolicy;
  /** Loads the code of discovered plugins (the host's `pluginLoader`); without it only plugins given as objects run. */
  loadPlugin?: PluginLoader;
  foreignPlugins?: ForeignPluginAdapter; // the host's, for OpenClaw-style plugins
  configWriter: (configPath: string) => ConfigAccess['locked']; // the host's: the kernel writes no files
  /** Kernel-level config errors stop the boot with a ConfigError unless false (`claw config validate`, `doctor`). */
  strictConfig?: boolean;
  /** Run register() of plugins given as objects at boot (default true; config checks pass false). */
  activateInline?: boolean;
  /** Where compiled plugin schemas are kept for the next process (the host's `validatorCache`); default nowhere. */
  validators?: (stateDir: string) => ValidatorStore;
  /** Services the host itself offers, id → api (the runtime-deps installer): no plugin to turn off, and they meet `requires`. */
  services?: (kernel: { paths: KernelPaths; env: Env; logger: Logger }) => Readonly<Record<string, unknown>>;
}

export interface Kernel {
  readonly paths: KernelPaths;
  readonly config: ConfigSnapshot;
  readonly lanes: LaneScheduler;
  readonly hooks: HookBus;
  readonly protocol: ProtocolRegistry;
  readonly plugins: PluginHost;
  readonly capabilities: CapabilityLookup;
  /** Already redacting: what reaches the logger given in the options has secrets masked. */
  readonly logger: Logger;
  /** The one redaction layer for every output (logs, tool results, transcripts, status, frames). */
  readonly redact: Redactor;
  /** Every config problem: kernel schema, env references, plugin configs, unknown sections. */
  issues(): ConfigIssue[];
  /** Handler failures reported by the hook bus (most recent last, at most 100). */
  hookErrors(): readonly HookErrorReport[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

const MAX_HOOK_ERRORS = 100;

export async function createKernel(options: KernelOptions): Promise<Kernel> {
  trace('kernel: boot');
  const env = options.env ?? process.env;
  const stateDir = options.stateDir ?? resolveStateDir(env);
  const configPath =
    options.configPath ?? (options.stateDir ? join(stateDir, 'openclaw.json') : resolveConfigPath(env));

  useValidatorStore(options.validators?.(join(stateDir, 'cache', 'validators')));
  const { policy } = options;
  const snapshot = judged(
    options.config ? snapshotOf(options.config, configPath, env) : readConfigFile(configPath, env),
    policy,
  );
  // From the whole resolved config, not the usable part: a section dropped for a schema
  // error may still hold a secret that ends up in a message.
  const redact = policy.redactor(snapshot.resolved, env);
  const logger = redactingLogger(options.logger, redact);
  let config = usableConfig(snapshot);

  const defaults = config.agents?.defaults ?? {};
  const workspaceDir = defaults.workspace
    ? resolveUserPath(defaults.workspace, dirname(configPath), env)
    : join(stateDir, 'workspace');
  const paths: KernelPaths = { stateDir, workspaceDir, configPath };

  const lanes = new LaneScheduler({
    caps: { main: defaults.maxConcurrent },
    onNotice: ({ lane, waitedMs, queuedBehind }) =>
      logger.warn(`lane "${lane}" task waited ${waitedMs} ms to start (${queuedBehind} still queued)`, {
        lane,
        waitedMs,
      }),
  });

  const hookErrors: HookErrorReport[] = [];
  // The host needs the hook bus and the bus asks the host to load plugins: bound after both exist.
  let host: PluginHost | undefined;
  const hooks = new HookBus({
    onError: (report) => {
      hookErrors.push(report);
      if (hookErrors.length > MAX_HOOK_ERRORS) hookErrors.shift();
      const log = report.kind === 'async-in-sync' ? logger.warn : logger.error;
      log(report.message, { plugin: report.pluginId, hook: report.hook });
    },
    prepare: (hook) => host?.prepareHook(hook),
  });
  const protocol = new ProtocolRegistry();

  const configFile = {
    read: () => judged(readConfigFile(configPath, env), policy),
    // A throwaway kernel over the candidate config: same discovery, no plugin code run.
    check: async (raw: Record<string, unknown>) => {
      const quiet = { logger: silentLogger, strictConfig: false, activateInline: false };
      return (await createKernel({ ...options, ...quiet, config: raw, configPath, stateDir })).issues();
    },
    // Plugins read config() afresh, so swapping it is how a hot reload takes effect.
    use: (next: ConfigSnapshot) => void (config = usableConfig(next)),
    locked: options.configWriter(configPath),
  };

  const plugins = new PluginHost({
    candidates: options.discover?.({ config, paths, env }) ?? [],
    inline: options.plugins,
    kernel: { lanes, protocol, redact, paths, env, configFile, config: () => config },
    hooks,
    logger,
    policy,
    loadPlugin: options.loadPlugin,
    foreign: options.foreignPlugins,
    hostServices: options.services?.({ paths, env, logger }),
  });
  host = plugins;
  const contributed = policy.contributedConfigIssues(snapshot.resolved, plugins.list());
  const errors = [...snapshot.issues, ...contributed].filter((issue) => issue.level === 'error');
  if (errors.length > 0 && options.strictConfig !== false) throw new ConfigError(configPath, errors);
  for (const diagnostic of plugins.diagnostics) logger.warn(diagnostic.message, { plugin: diagnostic.pluginId });
  if (options.activateInline !== false) await plugins.activateInline();
  trace(`kernel: ${plugins.list().length} plugins resolved`);

  return {
    paths,
    config: snapshot,
    lanes,
    hooks,
    protocol,
    plugins,
    capabilities: plugins.kernelServices.capabilities,
    logger,
    redact,
    issues: () => [...snapshot.issues, ...contributed, ...plugins.issues],
    hookErrors: () => hookErrors,
    start: () => plugins.start(),
    stop: () => plugins.stop(),
  };
}
