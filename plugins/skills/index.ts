/**
 * The skills plugin: the "skills" service (catalog.ts) that the agent plugin asks for the
 * system prompt's skills list and for skill slash commands; the env of eligible skills for
 * the agent's exec calls (before_tool_call); `skills.status` and the `skills.changed` event;
 * and `claw skills`.
 */
import { cliCommand } from '../../sdk/cli.js';
import { definePlugin, ErrorCodes, ProtocolError, type KernelConfig } from '../../sdk/index.js';
import { unknownAgentProblem } from '../../sdk/agent/index.js';
import { requireService } from '../../sdk/services.js';
import { SANDBOX_ROUTE_SERVICE, type SandboxRouter } from '../../sdk/sandbox/index.js';
import { SkillsCatalog } from './catalog.js';
import { SKILLS_HELP, skillsCommand } from './cli.js';
import { registerSkillMethods } from './openclaw-methods.js';

export default definePlugin({
  id: 'skills',
  async register(api) {
    api.kernel.protocol.registerEvent('skills.changed', api.id, {
      scope: 'operator.read',
      description: '{reason}: the skills changed on disk; refresh with skills.status.',
    });
    const router = await requireService<SandboxRouter>(api.kernel, SANDBOX_ROUTE_SERVICE, 'the skills plugin');
    const catalog = new SkillsCatalog(api.kernel, api.logger, router, {
      onChange: (reason) => {
        api.kernel.protocol.emit('skills.changed', { reason });
      },
    });
    api.registerService({ id: 'skills', api: catalog, stop: () => catalog.close() });

    // Only exec runs of an agent's turn (they carry a runId) get a skill's env.
    api.on('before_tool_call', (event, ctx) => {
      if (event.toolName !== 'exec' || !ctx.agentId || !ctx.runId) return undefined;
      const add = catalog.execEnv(ctx.agentId, ctx.sessionKey, event.params);
      if (!add) return undefined;
      return {
        params: {
          ...event.params,
          env: { ...add, ...((event.params.env as Record<string, string> | undefined) ?? {}) },
        },
      };
    });

    api.registerGatewayMethod('skills.status', {
      scope: 'operator.read',
      description: "An agent's skills: where each comes from, whether it is eligible and why not.",
      params: {
        type: 'object',
        additionalProperties: false,
        properties: { agentId: { type: 'string', minLength: 1 } },
      },
      handler: (params: { agentId?: string }) => {
        const problem =
          params.agentId === undefined
            ? undefined
            : unknownAgentProblem(api.kernel.config() as KernelConfig, params.agentId);
        if (problem) throw new ProtocolError(ErrorCodes.INVALID_REQUEST, problem);
        return catalog.report(params.agentId);
      },
    });

    registerSkillMethods(api, catalog);

    api.registerCli({
      name: 'skills',
      description: 'List skills and check their requirements',
      run: cliCommand(SKILLS_HELP, (argv, ctx) => skillsCommand(argv, ctx, api, catalog)),
    });
  },
});
