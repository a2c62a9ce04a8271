/**
 * The gateway plugin. Registering is cheap: methods, events, CLI commands and the
 * `gateway` service. The server itself (ws, fastify) is imported when the service
 * starts, and the client side when a CLI command runs.
 */
import { clawVersion, NODES_SERVICE, type GatewayDaemon, type NodeService } from '../../sdk/index.js';
import { definePlugin } from '../../sdk/index.js';
import { gatewayAuthService } from './auth.js';
import { pluginsWithLeftWork } from './left-work.js';
import { logFile } from './log-file.js';
import { registerToolsCatalog } from './tools-catalog.js';
import { registerToolsInvoke } from './tools-invoke.js';
import { registerToolsInvokeHttp } from './tools-invoke-http.js';
import { registerMethods } from './methods.js';
import { registerHostMethods } from './host-methods.js';
import { registerFsListDir } from './fs-list-dir.js';
import { registerMemoryMethods } from './memory-methods.js';
import { registerRestartRequest } from './restart-request.js';
import { registerConfigLookup } from './config-lookup.js';
import { registerConfigMethods } from './config-methods.js';
import { registerPluginInspectMethods } from './plugin-inspect.js';
import { registerDeviceMethods } from './device-methods.js';
import { registerDeviceSetupMethods } from './device-setup.js';
import { registerNodeMethods } from './nodes.js';
import { PairingStore, pairingFile } from './pairing.js';
import { GatewayRuntime } from './runtime.js';
import type { GatewayService } from './service.js';
import { needsGeneratedToken, resolveSettings, withOverrides, type GatewaySection } from './settings.js';
import { saveGeneratedToken } from './token.js';
import { serviceUnits } from './daemon/units-service.js';

export default definePlugin({
  id: 'gateway',
  register(api) {
    const stateDir = api.kernel.paths.stateDir;
    const section = api.section<GatewaySection>('gateway');
    const runtime = new GatewayRuntime(
      api,
      new PairingStore(pairingFile(stateDir), api.kernel.redact, section.pairing.requestTtlMs),
      clawVersion(),
      logFile(stateDir),
      section.idempotencyWindowMs,
    );

    const events = api.kernel.protocol;
    events.registerEvent('connect.challenge', api.id, {
      description: 'Sent first on every connection: {nonce, ts} to sign.',
    });
    events.registerEvent('tick', api.id, { description: 'Keepalive every tickIntervalMs.' });
    events.registerEvent('presence', api.id, { scope: 'operator.read' });
    events.registerEvent('health', api.id);
    events.registerEvent('shutdown', api.id, { description: '{reason, restartExpectedMs?} before the gateway stops.' });
    events.registerEvent('error', api.id, { description: 'A frame was rejected and had no request id to answer.' });
    events.registerEvent('device.pair.requested', api.id, { scope: 'operator.pairing' });
    events.registerEvent('device.pair.resolved', api.id, { scope: 'operator.pairing' });
    events.registerEvent('config.changed', api.id, { scope: 'operator.read' });
    events.registerEvent('models.snapshot', api.id, {
      scope: 'operator.read',
      description:
        'Right after hello-ok, to a Control UI that asked (caps model-catalog-snapshot): {target, scope, catalog}.',
    });
    events.registerEvent('device.pair.changed', api.id, {
      scope: 'operator.pairing',
      description: 'A paired device or node was renamed or lost its node pairing: re-read the lists.',
    });
    events.registerEvent('device.pair.setup.completed', api.id, {
      scope: 'operator.pairing',
      description: '{setupId, deviceId, deviceName?, access, ts}: a node paired with a setup code.',
    });
    events.registerEvent('node.pair.requested', api.id, { scope: 'operator.pairing' });
    events.registerEvent('node.pair.resolved', api.id, { scope: 'operator.pairing' });
    events.registerEvent('node.hostStats', api.id, {
      scope: 'operator.read',
      droppable: true,
      description: '{nodeId, hostStats}: a node reported its CPU, load, memory and disk (node.host.stats).',
    });
    // Sent only to the node a command is for, never broadcast.
    events.registerEvent('node.invoke.request', api.id, {
      description: 'To one node: {id, nodeId, command, paramsJSON, timeoutMs, idempotencyKey, sessionKey?}.',
    });
    events.registerEvent('node.invoke.cancel', api.id, {
      description: 'To one node: {invokeId, nodeId}, its caller gave up on the command.',
    });
    events.registerEvent('plugins.changed', api.id, {
      scope: 'operator.read',
      droppable: true,
      description:
        '{generation, restartRequired}: the plugins section of the config changed (enable, disable, install).',
    });

    registerMethods(api, runtime);
    registerHostMethods(api, runtime);
    registerFsListDir(api);
    registerMemoryMethods(api);
    registerRestartRequest(api, runtime);
    registerConfigMethods(api, runtime);
    registerConfigLookup(api);
    registerPluginInspectMethods(api);
    registerDeviceMethods(api, runtime);
    registerDeviceSetupMethods(api, runtime);
    registerNodeMethods(api, runtime);
    registerToolsCatalog(api);
    registerToolsInvoke(api);
    registerToolsInvokeHttp(api);

    const service: GatewayService = {
      id: 'gateway',
      runtime,
      async start() {
        const given = withOverrides(section, runtime.overrides);
        const auth = needsGeneratedToken(given, api.kernel.env)
          ? { ...given.auth, mode: 'token' as const, token: await saveGeneratedToken(api) }
          : given.auth;
        const settings = resolveSettings({ ...given, auth }, api.kernel.env);
        const { GatewayServer } = await import('./server.js');
        const server = new GatewayServer({
          kernel: api.kernel,
          logger: api.logger,
          settings,
          pairing: runtime.pairing,
          setupCodes: runtime.setupCodes,
          version: runtime.version,
          nodes: runtime.nodes.registry,
        });
        await server.start();
        runtime.server = server;
        runtime.reloader.watch();
        // Loaded through their first service, whose start() resumes the work.
        for (const record of pluginsWithLeftWork(api.kernel.plugins(), api.kernel.paths.stateDir)) {
          const resumer = record.manifest?.services?.[0];
          const cannot = `cannot resume the work plugin "${record.id}" left`;
          if (!resumer) api.logger.error(`${cannot}: it declares onStartupIfState but no service to start`);
          else {
            const failed = (error: Error) => api.logger.error(`${cannot}: it failed to load: ${error.message}`);
            void api.kernel.capabilities.find('service', resumer).catch(failed);
          }
        }
      },
      async stop() {
        runtime.reloader.close();
        const server = runtime.server;
        runtime.server = undefined;
        await server?.stop(service.stopReason?.reason, service.stopReason?.restartExpectedMs);
        service.stopReason = undefined;
      },
    };
    api.registerService(service);
    const flagSecrets = () =>
      [runtime.overrides.auth?.token, runtime.overrides.auth?.password].filter((secret): secret is string => !!secret);
    api.registerService({ id: 'gateway-auth', api: { ...gatewayAuthService, flagSecrets } });
    api.registerService({ id: NODES_SERVICE, api: runtime.nodes satisfies NodeService });
    // The OS service's code loads only when `claw onboard`, `claw reset` or `claw uninstall` reaches for it.
    const daemon = async () => new (await import('./daemon/control.js')).Daemon(api.kernel.env, api.kernel.paths);
    api.registerService({
      id: 'gateway-daemon',
      api: {
        async install(options) {
          const outcome = await (await import('./daemon/install.js')).installService(api, await daemon(), options);
          return { done: outcome.ok, message: outcome.message };
        },
        async unavailable() {
          let found: Awaited<ReturnType<typeof daemon>>;
          try {
            found = await daemon();
          } catch (error) {
            // An OS claw has no service for.
            return (error as Error).message;
          }
          return found.unavailable();
        },
        stop: async () => (await daemon()).stop(),
        restart: async () => (await daemon()).restart(),
        uninstall: async () => (await daemon()).uninstall(),
      } satisfies GatewayDaemon,
    });
    // The same OS-service code for another claw program's unit (claw node install).
    api.registerService({ id: 'service-units', api: serviceUnits(api.kernel.env, api.kernel.paths) });

    const command = (name: string, description: string) =>
      api.registerCli({
        name,
        description,
        run: async (argv, ctx) => (await import('./cli.js')).runCommand(name, argv, ctx, api),
      });
    command('gateway', 'Run the gateway in the foreground; install|start|stop|restart|status|uninstall its OS service');
    command('health', 'Health of the running gateway');
    command('status', 'Status of the running gateway');
    command('devices', 'List, approve and reject device pairing requests');
    command('dashboard', 'Open the web UI signed in (--no-open prints the URL)');
    command('logs', "Show the gateway's log (--follow keeps showing new lines)");
    command('nodes', 'List, approve, rename and remove nodes; invoke, notify and run commands on one');
    command('qr', 'A setup code (and QR) that pairs one node with this gateway');
  },
});
