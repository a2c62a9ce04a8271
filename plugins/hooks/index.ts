/**
 * The hooks plugin owns the `hooks` config section, as OpenClaw splits it:
 *
 * - webhooks (`hooks.enabled`, `hooks.token`, `hooks.path`, `hooks.mappings`, …): HTTP
 *   endpoints under /hooks that wake the agent or run it (webhook-http.ts);
 * - internal hooks (`hooks.internal`): HOOK.md + handler folders run on command, agent,
 *   gateway and message events (runner.ts), offered to other plugins as the
 *   `internal-hooks` service; message and gateway events are bridged here from the kernel
 *   hook bus, command and bootstrap events are emitted by the agent plugin and agent loop.
 */
import { fileURLToPath } from 'node:url';
import {
  agentIds,
  agentPaths,
  normalizeAgentId,
  unknownAgentProblem,
  type AgentService,
  type SessionService,
} from '../../sdk/agent/index.js';
import { definePlugin, ErrorCodes, ProtocolError, type GatewayAuthService } from '../../sdk/index.js';
import { useService } from '../../sdk/services.js';
import { hookInventory, InternalHookRunner } from './runner.js';
import { webhookProblem, webhookSettings } from './settings.js';
import { createWebhookHandler } from './webhook-http.js';

/** The hooks shipped with claw (from source or from dist/). */
export const BUNDLED_HOOKS_DIR = fileURLToPath(new URL('./bundled/', import.meta.url));

/** A startup checklist may take a while; other events should be quick. */
const STARTUP_TIMEOUT_MS = 10 * 60_000;

export default definePlugin({
  id: 'hooks',
  register(api) {
    const kernel = api.kernel;
    const handler = createWebhookHandler({ kernel, logger: api.logger });
    // Outside gateway auth: webhook callers hold only the hook token, checked by the handler.
    api.registerHttpRoute({ method: '*', path: '/hooks', auth: 'none', handler });
    api.registerHttpRoute({ method: '*', path: '/hooks/*', auth: 'none', handler });

    const runner = new InternalHookRunner(kernel, api.logger, BUNDLED_HOOKS_DIR);
    const startupRunner = new InternalHookRunner(kernel, api.logger, BUNDLED_HOOKS_DIR, STARTUP_TIMEOUT_MS);
    api.registerService({ id: 'internal-hooks', api: runner });

    api.on('gateway_start', async () => {
      const settings = webhookSettings(kernel.config());
      const gatewayAuth = await useService<GatewayAuthService>(kernel, 'gateway-auth').catch(() => undefined);
      const problem = webhookProblem(settings, kernel.config(), kernel.env, gatewayAuth?.flagSecrets());
      if (problem) api.logger.error(`webhooks not started: ${problem}`);
      else if (settings.enabled)
        api.logger.info(
          `webhooks on at ${settings.path}/wake, ${settings.path}/agent${settings.mappings.length ? ` and ${settings.mappings.length} mapping(s)` : ''}`,
        );
      if (!startupRunner.wants('gateway', 'startup')) return;
      const config = kernel.config();
      const agents = agentIds(config).map((agentId) => ({
        agentId,
        workspaceDir: agentPaths(config, agentId, kernel.paths).workspaceDir,
      }));
      const deps = {
        runAgent: async (input: { agentId: string; sessionKey: string; message: string }) => {
          const agent = await useService<AgentService>(kernel, 'agent');
          if (!agent) throw new Error('the agent plugin is not enabled');
          try {
            return await agent.run({ ...input, freshSession: true, authorized: false, channel: 'boot' });
          } finally {
            // The boot session is temporary (its transcript stays on disk with the others).
            await (await useService<SessionService>(kernel, 'sessions'))?.store(input.agentId).delete(input.sessionKey);
          }
        },
        log: (level: 'info' | 'warn', message: string) => api.logger[level](message),
      };
      // Never delays the gateway's start: the handlers run in the background.
      void startupRunner.emit('gateway', 'startup', 'gateway', {
        workspaceDir: agents[0]?.workspaceDir ?? kernel.paths.workspaceDir,
        agents,
        deps,
      });
    });

    api.on('message_received', async (event, ctx) => {
      if (!ctx.sessionKey || !runner.wants('message', 'received')) return;
      await runner.emit('message', 'received', ctx.sessionKey, {
        from: event.from,
        content: event.content,
        channelId: event.channel,
        timestamp: event.timestamp,
        ...(event.accountId ? { accountId: event.accountId } : {}),
        ...(event.messageId ? { messageId: event.messageId } : {}),
        ...(event.metadata ? { metadata: event.metadata } : {}),
      });
    });

    api.on('message_sent', async (event, ctx) => {
      if (!ctx.sessionKey || !runner.wants('message', 'sent')) return;
      await runner.emit('message', 'sent', ctx.sessionKey, {
        to: event.to,
        content: event.content,
        success: event.success,
        channelId: event.channel,
        ...(event.error ? { error: event.error } : {}),
      });
    });

    // OpenClaw's report (`openclaw hooks list` and the Control UI read it): every discovered
    // hook judged against the config, and whether the gateway runs it.
    api.registerGatewayMethod('hooks.status', {
      scope: 'operator.read',
      description:
        'Internal hooks for an agent: {workspaceDir, managedHooksDir, hooks: [{name, hookKey, description, source, emoji?, events, filePath, enabledByConfig, requirementsSatisfied, missing, loadable, blockedReason?, selected, managedByPlugin}]}.',
      params: {
        type: 'object',
        additionalProperties: false,
        properties: { agentId: { type: 'string', minLength: 1 } },
      },
      handler: (params: { agentId?: string }) => {
        const agentId = params.agentId === undefined ? undefined : normalizeAgentId(params.agentId);
        const problem = agentId === undefined ? undefined : unknownAgentProblem(kernel.config(), agentId);
        if (problem) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, problem);
        const inventory = hookInventory(kernel, BUNDLED_HOOKS_DIR, agentId);
        const selected = new Set(inventory.selected.map((hook) => hook.hookKey));
        const hooks = inventory.statuses.map((hook) => ({
          ...hook,
          selected: selected.has(hook.hookKey),
          managedByPlugin: false,
        }));
        return { workspaceDir: inventory.workspaceDir, managedHooksDir: inventory.managedDir, hooks };
      },
    });

    // The CLI's code loads only for `claw hooks`, not with the gateway.
    api.registerCli({
      name: 'hooks',
      description: 'List, inspect, check, enable and disable internal hooks',
      run: async (argv, ctx) => (await import('./cli.js')).hooksCli(argv, ctx, api, BUNDLED_HOOKS_DIR),
    });
  },
});
