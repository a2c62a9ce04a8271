/**
 * The `api` object an OpenClaw plugin's `register(api)` receives, built over claw's. What
 * maps onto a claw capability is converted (tools, text providers, embedding providers,
 * commands, services, gateway methods, hooks); every other `register*` call is recorded
 * as a missing API — `claw plugins doctor` and `claw plugins install` name it — and
 * otherwise does nothing, so the rest of the plugin still registers.
 */
import { isAbsolute, resolve } from 'node:path';
import type { PluginRecord } from '../../kernel/index.js';
import { clawVersion } from '../../sdk/version.js';
import type { PluginApi } from '../../sdk/types/plugin.js';
import { fromOpenclawFactory, fromOpenclawTool, isOpenclawTool, type OpenclawToolFactory } from './tools.js';
import { fromOpenclawProvider, unmappableProvider, type OpenclawProvider } from './provider.js';
import { embeddingServiceId, type PluginEmbeddingAdapter } from '../../sdk/memory/embeddings.js';
import { invalidEmbeddingAdapter } from './embedding.js';

/** Prefix of the record warnings that name an OpenClaw API claw lacks. */
export const NEEDS_PREFIX = 'needs ';

/** OpenClaw APIs with no claw counterpart, and why, for the messages. */
const UNSUPPORTED: Record<string, string> = {
  registerSpeechProvider: 'claw has no speech (TTS) providers',
  registerCliBackend: 'claw has no CLI inference backends',
  registerCli: "OpenClaw's CLI registrars are commander programs; claw's CLI commands are { name, run }",
  registerHttpRoute: 'a route needs a path and a handler(req, res)',
  registerChannel: "OpenClaw channel plugins need OpenClaw's channel runtime",
};

type Missing = (api: string, why?: string) => void;

export function missingNote(api: string, why?: string): string {
  return `${NEEDS_PREFIX}${api} (${why ?? UNSUPPORTED[api] ?? 'not part of what claw maps from OpenClaw'})`;
}

function registerTool(
  api: PluginApi,
  missing: Missing,
  tool: unknown,
  options: { name?: string; names?: string[]; optional?: boolean } = {},
): void {
  const config = () => api.kernel.config() as Record<string, unknown>;
  let tools;
  if (isOpenclawTool(tool)) tools = [fromOpenclawTool(tool)];
  else if (typeof tool === 'function') tools = fromOpenclawFactory(tool as OpenclawToolFactory, config);
  else if (tool !== null && typeof tool === 'object' && typeof (tool as { create?: unknown }).create === 'function') {
    tools = fromOpenclawFactory((ctx) => (tool as { create: OpenclawToolFactory }).create(ctx), config);
  } else throw new TypeError('registerTool needs a tool with name and execute, or a factory');
  if (tools.length === 0) {
    const names = options.names ?? (options.name ? [options.name] : []);
    missing(
      'registerTool',
      `a tool factory that returns no tool without a session${names.length ? ` (${names.join(', ')})` : ''}: claw needs each tool's schema up front`,
    );
  }
  for (const converted of tools) api.registerTool(converted);
}

/** OpenClaw gateway handlers answer through `respond(ok, payload, error)`; claw's return the payload. */
function gatewayMethod(handler: (ctx: Record<string, unknown>) => unknown) {
  return {
    handler: (params: unknown, ctx: unknown) =>
      new Promise((resolveCall, reject) => {
        const respond = (ok: boolean, payload?: unknown, error?: { message?: string }) =>
          ok ? resolveCall(payload) : reject(new Error(error?.message ?? 'request failed'));
        Promise.resolve(handler({ params: params ?? {}, respond, context: ctx }))
          .then((value) => resolveCall(value))
          .catch(reject);
      }),
  };
}

export function openclawApi(api: PluginApi, record: PluginRecord, missing: Missing): Record<string, unknown> {
  const kernel = api.kernel;
  const runtime = {
    version: clawVersion(),
    config: { current: () => kernel.config(), loadConfig: () => kernel.config() },
    logging: {
      getChildLogger: (bindings: Record<string, unknown> = {}) => api.logger.child(bindings),
      shouldLogVerbose: () => false,
    },
    state: { resolveStateDir: () => kernel.paths.stateDir },
    agent: { resolveAgentWorkspaceDir: () => kernel.paths.workspaceDir },
  };
  const known: Record<string, unknown> = {
    id: api.id,
    name: api.name,
    version: api.version,
    description: record.description,
    source: record.entryPath,
    rootDir: api.rootDir,
    registrationMode: 'full',
    config: kernel.config(),
    pluginConfig: api.config,
    logger: api.logger,
    runtime,
    resolvePath: (input: string) => (isAbsolute(input) ? input : resolve(api.rootDir ?? kernel.paths.stateDir, input)),
    registerTool: (tool: unknown, options?: { name?: string; names?: string[] }) =>
      registerTool(api, missing, tool, options),
    registerProvider: (provider: OpenclawProvider & { stream?: unknown }) => {
      // A claw-shaped provider (a plugin written against claw's SDK) passes straight through.
      if (typeof provider?.stream === 'function') return api.registerProvider(provider as never);
      const why = unmappableProvider(provider);
      if (why) return missing('registerProvider', why);
      api.registerProvider(fromOpenclawProvider(provider, kernel));
    },
    // Memory finds it by id (memorySearch.provider) through this service; see sdk/memory/embeddings.ts.
    registerEmbeddingProvider: (adapter: PluginEmbeddingAdapter) => {
      const why = invalidEmbeddingAdapter(adapter);
      if (why) return missing('registerEmbeddingProvider', why);
      api.registerService({ id: embeddingServiceId(adapter.id), api: adapter });
    },
    registerCommand: (command: never) => api.registerCommand(command),
    // Same names, other shapes in OpenClaw: passed on when they have claw's shape, named when not.
    registerChannel: (channel: { send?: unknown }) =>
      typeof channel?.send === 'function' ? api.registerChannel(channel as never) : missing('registerChannel'),
    registerCli: (cli: { run?: unknown }) =>
      typeof cli?.run === 'function' ? api.registerCli(cli as never) : missing('registerCli'),
    registerHttpRoute: (route: { path?: string; method?: string; auth?: string; handler?: unknown }) => {
      if (typeof route?.path !== 'string' || typeof route.handler !== 'function') return missing('registerHttpRoute');
      // OpenClaw's auth "plugin" means the plugin checks requests itself.
      api.registerHttpRoute({
        ...(route as object),
        method: (route.method ?? '*') as never,
        auth: route.auth === 'plugin' ? 'none' : 'gateway',
      } as never);
    },
    registerService: (service: { id: string; start?: (ctx: unknown) => unknown; stop?: (ctx: unknown) => unknown }) =>
      api.registerService({
        id: service.id,
        start: (ctx) => service.start?.({ ...ctx, config: kernel.config() }) as Promise<void>,
        stop: () =>
          service.stop?.({
            config: kernel.config(),
            stateDir: kernel.paths.stateDir,
            logger: api.logger,
          }) as Promise<void>,
      }),
    registerGatewayMethod: (name: string, handler: unknown) =>
      api.registerGatewayMethod(
        name,
        typeof handler === 'function' ? gatewayMethod(handler as never) : (handler as never),
      ),
    on: (hook: string, handler: never, options?: { priority?: number; timeoutMs?: number }) => {
      try {
        api.on(hook as never, handler, options);
      } catch (error) {
        missing(`on("${hook}")`, (error as Error).message);
      }
    },
  };
  // claw's own api answers the rest (a plugin in this format may still be written against claw's
  // SDK: registerMemory, registerSandbox, …); any other register* (speech, media,
  // web search providers, …) is named, not fatal.
  const claw = api as unknown as Record<string, unknown>;
  return new Proxy(known, {
    get(target, property) {
      if (typeof property !== 'string' || property in target) return target[property as string];
      if (property in claw)
        return typeof claw[property] === 'function' ? (claw[property] as Function).bind(api) : claw[property];
      return /^register[A-Z]/.test(property) ? () => missing(property) : undefined;
    },
  });
}
