/**
 * The runtime tools: exec runs shell commands, process manages the ones left running in the
 * background, nodes reaches the gateway's paired nodes (its run shares exec host=node's path).
 * Sessions belong to this plugin instance and are killed when the kernel stops.
 */
import { definePlugin, type ToolContext } from '../../sdk/index.js';
import { EXEC_ENV_SERVICE, type ExecEnvService } from '../../sdk/exec/index.js';
import { describeEnvRefusals, operatorExecEnv, refusedExecEnv } from './env-policy.js';
import { createExecTool, type ExecConfig } from './exec-tool.js';
import { hostCommandEnv, judgeLocalGitConfig } from './git.js';
import { createNodesTool } from './nodes-tool.js';
import { createProcessTool } from './process-tool.js';
import { SessionRegistry } from './registry.js';

interface ExecPluginConfig extends ExecConfig {
  finishedSessionTtlSeconds: number;
  maxFinishedSessions: number;
}

export default definePlugin<ExecPluginConfig>({
  id: 'tools-exec',
  register(api) {
    const config = api.config;
    const registry = new SessionRegistry({
      finishedTtlMs: config.finishedSessionTtlSeconds * 1000,
      maxFinished: config.maxFinishedSessions,
    });
    const workspace = (ctx: ToolContext) => ctx.workspaceDir ?? api.kernel.paths.workspaceDir;

    api.registerTool(
      createExecTool({
        registry,
        config,
        workspace,
        capabilities: api.kernel.capabilities,
        liveConfig: () => api.kernel.config() as Record<string, unknown>,
        kernel: api.kernel,
      }),
    );
    api.registerTool(createProcessTool(registry));
    api.registerTool(
      createNodesTool({
        kernel: api.kernel,
        liveConfig: () => api.kernel.config() as Record<string, unknown>,
        maxOutputChars: config.maxOutputChars,
        timeoutSeconds: config.timeoutSeconds,
      }),
    );
    api.registerService({
      id: 'tools-exec',
      start() {},
      stop: () => registry.stopAll(),
    });
    const execEnv: ExecEnvService = {
      async envRefusal(env, call, params) {
        const refusals = refusedExecEnv(env, await operatorExecEnv(api.kernel.capabilities, call, params));
        return refusals.length > 0 ? describeEnvRefusals(refusals) : undefined;
      },
      hostEnv: (env) => hostCommandEnv(env),
      riskyGitConfig: judgeLocalGitConfig,
    };
    api.registerService({ id: EXEC_ENV_SERVICE, api: execEnv });
  },
});
