/**
 * The channels plugin: provides the service "channels", whose `api` the kernel's channel
 * choke point (`api.kernel.channels`) forwards to. Its service starts every configured
 * channel account when the gateway starts (the kernel starts it after the other services)
 * and stops them when it stops. A process that never starts (a CLI command sending one
 * message) still gets `send`, `receive` and pairing. The channels' gateway methods
 * (`channels.*`, `web.login.*`, `send`, `pairing.*`) and CLI commands are registered here too.
 */
import type { AgentService } from '../../sdk/agent/index.js';
import { useService } from '../../sdk/services.js';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { definePlugin, expandHome, type ServiceDefinition } from '../../sdk/index.js';
import { ChannelManager } from './manager.js';
import { registerChannelMethods } from './methods.js';
import { registerMessageActions } from './message-actions.js';
import { registerAccountMethods } from './account-methods.js';

/** `<stateDir>/workspace-<agentId>` folders (agents without an explicit workspace). */
function workspaceDirs(stateDir: string): string[] {
  try {
    return readdirSync(stateDir)
      .filter((name) => name.startsWith('workspace-'))
      .map((name) => join(stateDir, name));
  } catch {
    return [];
  }
}

export default definePlugin({
  id: 'channels',
  register(api) {
    const kernel = api.kernel;
    const { capabilities, paths } = kernel;
    const manager = new ChannelManager({
      config: kernel.config,
      hooks: kernel.hooks,
      logger: api.logger,
      redact: kernel.redact,
      stateDir: paths.stateDir,
      env: kernel.env,
      declaredChannels: () =>
        capabilities.list('channel').map((info) => ({ id: info.name, pluginId: info.pluginId, loaded: info.loaded })),
      findChannel: (id) => capabilities.find('channel', id),
      mediaRoots: () => {
        const list = (
          (kernel.config().agents as { list?: Array<{ workspace?: string }> } | undefined)?.list ?? []
        ).flatMap((agent) => (agent.workspace ? [expandHome(agent.workspace, kernel.env)] : []));
        return [paths.workspaceDir, join(paths.stateDir, 'media'), ...list, ...workspaceDirs(paths.stateDir)];
      },
      // Only when the agent plugin is loaded already: a status call must not load it.
      deliveries: async () => {
        if (!capabilities.list('service').some((info) => info.name === 'agent' && info.loaded)) return [];
        const agent = await useService<AgentService>(kernel, 'agent').catch(() => undefined);
        return agent?.deliveryStatus?.() ?? [];
      },
      agent: () =>
        useService<AgentService>(kernel, 'agent').catch((error: Error) => {
          api.logger.error(`channel message not handled: ${error.message}`);
          return undefined;
        }),
    });
    const service: ServiceDefinition = {
      id: 'channels',
      api: manager,
      start: () => manager.start(),
      stop: () => manager.stop(),
    };
    api.registerService(service);
    registerChannelMethods(api);
    registerMessageActions(api);
    registerAccountMethods(api, manager);

    for (const [name, description] of [
      ['channels', 'Channels and their accounts (list, status, add, remove, login, logout)'],
      ['message', 'Send a message through a channel (message send)'],
      ['pairing', 'Approve people who message the assistant (pairing list, pairing approve)'],
    ] as const) {
      api.registerCli({
        name,
        description,
        run: async (argv, ctx) => (await import('./cli.js')).runChannelsCli(name, argv, ctx, api),
      });
    }
  },
});
